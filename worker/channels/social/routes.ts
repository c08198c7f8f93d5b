/**
 * /v1/channels/meta (spec 4.6): the page inbox's API-key routes. Save your own app, start a connect flow, read the
 * state, list the pages the permission step loaded, pick one, remove the connection. The provider-facing routes
 * (hosted page, OAuth callback, webhooks) are in public-routes.ts.
 */
import { createRoute, type z } from '@hono/zod-openapi'
import { IdempotencyKeyHeader } from '../../../schema/api/common'
import {
  SelectPageBody,
  SetSocialAppBody,
  SocialApp,
  SocialConnect,
  SocialConnectBody,
  SocialPages,
  SocialRemoved,
  SocialStatus,
} from '../../../schema/api/social'
import { directory } from '../../db/shards'
import { statusErrors } from '../../lib/openapi-responses'
import { checkAccount } from '../../safety/key-refusals'
import { emptyBodyIsNone, resourceApp } from '../../validate'
import { appAnswer, saveApp, startConnect } from './connect'
import { disconnect, loadedPages, selectPage, status } from './pages'

export const socialRoutes = resourceApp()
// Connect takes `{}` or nothing: an empty body sent as JSON means nothing, not "invalid JSON".
socialRoutes.use('/connect', emptyBodyIsNone)

const TAG = ['Page inbox']
const ok = <S extends z.ZodType>(schema: S, description: string) => ({ 200: { description, content: { 'application/json': { schema } } } })

socialRoutes.openapi(
  createRoute({
    method: 'put',
    path: '/app',
    operationId: 'set_social_app',
    tags: TAG,
    summary: 'Save the social app',
    description: [
      "Saves the user's own registered social app (app ID, app secret, configuration ID), needed once before connect_social_inbox; the answer gives the redirect URI and callback URL to paste into that app.",
      [
        'Saves the App ID, App Secret (stored sealed, never returned) and the Facebook Login for Business configuration ID',
        'of the app you registered. The answer holds what to paste into that app: `redirect_uri` (Valid OAuth Redirect URIs)',
        'and `callback_url` with `verify_token` (Webhooks, for Page and Instagram). Saving again replaces the app and keeps',
        'both URLs and the verify token. See docs/channels/social.md.',
      ].join(' '),
    ].join('\n\n'),
    request: { body: { required: true, content: { 'application/json': { schema: SetSocialAppBody } } } },
    responses: { ...ok(SocialApp, 'Saved'), ...statusErrors([400, 401]) },
  }),
  async (c) => {
    const app = await saveApp(c.env, directory(c.env), c.get('tenant').id, c.req.valid('json'), Date.now())
    return c.json(appAnswer(c.env, c.req.url, app), 200)
  }
)

socialRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/connect',
    operationId: 'connect_social_inbox',
    tags: TAG,
    summary: 'Connect a page inbox',
    description: [
      'Returns a short-lived connect_url to give the user: they grant the page permissions there; then list_pages and select_page. Answers social_app_required until set_social_app was done.',
      [
        'Answers `connect_url`: a page of this service, valid `connect_url_expires_at` (about 10 minutes), that leads the',
        'user to the permission screen of their app. Afterwards the state is `pages_loaded`: list the pages with',
        'GET /channels/meta/pages and pick one with POST /channels/meta/pages/select. Without a saved app:',
        '409 `social_app_required`.',
      ].join(' '),
    ].join('\n\n'),
    request: { headers: IdempotencyKeyHeader, body: { required: false, content: { 'application/json': { schema: SocialConnectBody } } } },
    responses: {
      ...ok(SocialConnect, 'A connect link'),
      ...statusErrors([400, 401, 409, 422], { 409: '`social_app_required`: save your app first, or `idempotency_key_in_progress`' }),
    },
  }),
  async (c) => {
    const flow = await startConnect(c.env, directory(c.env), c.var.db, c.req.url, c.get('tenant').id, Date.now())
    return c.json({ success: true as const, status: 'pending' as const, connect_url: flow.connectUrl, connect_url_expires_at: flow.expiresAt }, 200)
  }
)

socialRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/status',
    operationId: 'get_social_inbox_status',
    tags: TAG,
    summary: 'Get the page-inbox connection',
    description: [
      'Reports the page-inbox connection: not_connected, pending, pages_loaded, connected, failed (with a reason, such as token_revoked) or expired, with the page and its linked professional account.',
      [
        '`status`: `not_connected`, `pending` (link issued), `pages_loaded` (pick a page), `connected`, `failed` (with',
        '`reason`, e.g. `permission_denied`, or `token_revoked` once the provider stopped accepting the page’s token) or',
        '`expired` (the link or the page choice lapsed: connect again). Shows the page and its linked Instagram account.',
      ].join(' '),
    ].join('\n\n'),
    responses: { ...ok(SocialStatus, 'The state'), ...statusErrors([401]) },
  }),
  async (c) => {
    const state = await status(c.env, c.var.db, c.get('tenant').id, Date.now())
    // A key limited to some accounts sees the page inbox only when it lists the connected page's account.
    checkAccount(c.get('key'), state.account_id, 'the page inbox without a connected page it lists')
    return c.json(state, 200)
  }
)

socialRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/pages',
    operationId: 'list_pages',
    tags: TAG,
    summary: 'List pages',
    description: [
      'Lists the pages the user granted access to (state pages_loaded), each with its linked professional account, so one can be chosen with select_page.',
      'The pages the user granted in the permission step, each with its linked Instagram professional account (or null). 409 `pages_not_loaded` unless the state is `pages_loaded`.',
    ].join('\n\n'),
    responses: { ...ok(SocialPages, 'The pages'), ...statusErrors([401, 409], { 409: '`pages_not_loaded`: no finished permission step to pick from' }) },
  }),
  async (c) => c.json({ success: true as const, pages: await loadedPages(c.env, c.var.db, c.get('tenant').id, Date.now()) }, 200)
)

socialRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/pages/select',
    operationId: 'select_page',
    tags: TAG,
    summary: 'Select the page',
    description: [
      'Connects one page (and the professional account linked to it) as the inbox; one page per account. On this channel you can only reply to people who wrote, within 24 hours of their last message.',
      [
        'Connects one page (one page per account): subscribes your app to the page’s messages and adds the `social`',
        'account (its id is the page id), which includes the page’s linked Instagram professional account; both count',
        'once against the plan’s account cap. People are answered on the surface they wrote on.',
      ].join(' '),
    ].join('\n\n'),
    request: { headers: IdempotencyKeyHeader, body: { required: true, content: { 'application/json': { schema: SelectPageBody } } } },
    responses: {
      ...ok(SocialStatus, 'Connected'),
      ...statusErrors([400, 401, 404, 409, 422, 502], {
        404: '`page_not_found`: not among the granted pages',
        409: '`pages_not_loaded` or `account_cap_reached`',
        422: '`page_not_messageable`: your role on the page does not include messaging',
        502: '`upstream_error`: the provider refused the subscription',
      }),
    },
  }),
  async (c) => c.json(await selectPage(c.env, c.var.db, c.get('tenant'), c.req.valid('json').page_id, Date.now()), 200)
)

socialRoutes.openapi(
  createRoute({
    method: 'delete',
    path: '/',
    operationId: 'disconnect_social_inbox',
    tags: TAG,
    summary: 'Disconnect the page inbox',
    description: [
      'Removes the page connection and its linked professional account; ask the user first. Idempotent.',
      'Unsubscribes your app from the page (best effort), removes the page’s `social` account with its linked Instagram account, and fails messages still queued. Message history stays; your saved app stays. Idempotent.',
    ].join('\n\n'),
    responses: { ...ok(SocialRemoved, 'Removed (or nothing to remove)'), ...statusErrors([401]) },
  }),
  async (c) => c.json(await disconnect(c.env, c.var.db, c.get('tenant').id, undefined, Date.now()), 200)
)
