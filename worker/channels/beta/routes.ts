/**
 * /v1/channels/beta (spec 4.4): log a beta user account in through the relay (code, two-step password, or QR),
 * read its status, remove it. Errors take the channel-connection shape `{success: false, error, error_code: <status>}`;
 * login refusals each have their own status, and the error text starts with a stable code (docs/channels/beta.md).
 */
import { createRoute } from '@hono/zod-openapi'
import { IdempotencyKeyHeader } from '../../../schema/api/common'
import {
  BetaCodeBody,
  BetaConnectBody,
  BetaConnectResult,
  BetaPasswordBody,
  BetaPhoneParam,
  BetaRemoved,
  BetaStatusResult,
  BetaVerifyResult,
} from '../../../schema/api/beta'
import { removeAccount } from '../../account/lifecycle'
import { getAccount } from '../../db/accounts'
import { database } from '../../db/client'
import { accountStub } from '../../lib/objects'
import { statusErrors } from '../../lib/openapi-responses'
import { resourceApp } from '../../validate'
import { BETA_PAGE } from './connect-token'
import { PAGE_OPERATIONS } from './connect-page'
import { statusOf, tokenOf } from './status'
import { betaAccount, ensureBetaConnecting, problemError, startBetaLogin, VERIFY_ERRORS, verifyStep } from './connect'

export const betaRoutes = resourceApp()
// The hosted page is served by the channel's public routes (its token, not an API key, lets it in) and described
// here, under the channel's path, so the OpenAPI document lists it with the rest of beta.
for (const op of PAGE_OPERATIONS) betaRoutes.openAPIRegistry.registerPath(op)

/** How long the status endpoint waits for the relay's live answer before it answers from the last report. */
const STATUS_PROBE_TIMEOUT_MS = 1500
const TAG = ['beta channel']

betaRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/connect',
    tags: TAG,
    operationId: 'connect_beta',
    summary: 'Log in a beta account (tool connect_beta)',
    description: [
      'Starts logging in the user’s own beta account. The account is listed as `connecting` at once (no warm-up ramp) and counts',
      'against the plan’s account cap. Mode `code`: a one-time code goes to the user’s beta app (`code_required`); verify it with',
      'POST /channels/beta/connect/{phoneNumber}/code, then the two-step password if asked. Mode `qr`: the answer carries `qr_url`',
      '(`tg://login?token=…`) and `login_token`; the user scans it in the app under Devices, and the token is replaced about every 30 s',
      '(poll the status). `initializing` means the session is still starting (no relay yet). A banned number answers 403, a number',
      'without a beta account 404, too many attempts 429. `connect_url` (valid 30 minutes, `connect_url_expires_at`) is a hosted page',
      'where the user finishes the login alone, with no login of its own: it asks for the code and any two-step password, or shows',
      'the QR and replaces it before each token lapses (GET /channels/beta/connect/page).',
    ].join(' '),
    request: { headers: IdempotencyKeyHeader, body: { required: true, content: { 'application/json': { schema: BetaConnectBody } } } },
    responses: {
      200: { description: 'Login started', content: { 'application/json': { schema: BetaConnectResult } } },
      ...statusErrors([400, 401, 403, 404, 409, 422, 429]),
    },
  }),
  async (c) => {
    const body = c.req.valid('json')
    const tenant = c.get('tenant')
    const db = database(c.env.DB)
    const phone = body.phone_number
    const existing = await getAccount(db, tenant.id, phone)
    const base = { success: true as const, phone_number: phone, connect_url: null, connect_url_expires_at: null }
    if (existing?.channel === 'beta' && existing.status === 'connected' && !body.force_new) {
      const { link } = await accountStub(c.env, tenant.id, phone).linkStatus(null)
      return c.json({ ...base, status: 'connected' as const, session_id: link?.sid ?? null }, 200)
    }
    await ensureBetaConnecting(db, tenant, phone)
    const link = await startBetaLogin(c.env, tenant.id, phone, body.mode, body.force_new)
    const problem = link && (link.session === 'disconnected' || link.session === 'restricted') ? problemError(link.problem, link.message) : null
    if (problem) throw problem
    const session_id = link?.sid ?? null
    if (link?.session === 'connected') return c.json({ ...base, status: 'connected' as const, session_id }, 200)
    // The user can finish the login on the hosted page: enter the code and password, or scan the refreshing QR.
    const page = await BETA_PAGE.link(c.env, c.req.url, { tenant: tenant.id, account: phone }, Date.now())
    const pending = { ...base, session_id, connect_url: page.url, connect_url_expires_at: page.expiresAt }
    if (link?.session === 'qr_pending' && link.qr) {
      return c.json({ ...pending, status: 'qr_required' as const, login_token: tokenOf(link.qr), qr_url: link.qr }, 200)
    }
    if (link?.session === 'code_required') return c.json({ ...pending, status: 'code_required' as const }, 200)
    return c.json({ ...pending, status: 'initializing' as const }, 200)
  }
)

betaRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/connect/{phoneNumber}/code',
    tags: TAG,
    operationId: 'submit_beta_code',
    summary: 'Verify the login code (tool submit_beta_code)',
    description:
      'Submits the one-time code the user received in their beta app. Answers `connected`, or `password_required` when the account has a two-step password (then POST …/password). A wrong code keeps the login open (400 code_invalid); an expired one sends a fresh code (410 code_expired). The code is passed to the relay once and never stored, logged or echoed.',
    request: { params: BetaPhoneParam, body: { required: true, content: { 'application/json': { schema: BetaCodeBody } } } },
    responses: { 200: { description: 'Verified', content: { 'application/json': { schema: BetaVerifyResult } } }, ...VERIFY_ERRORS },
  }),
  async (c) => {
    const { phoneNumber: phone } = c.req.valid('param')
    return c.json(await verifyStep(c, c.get('tenant').id, phone, { kind: 'code', code: c.req.valid('json').code }), 200)
  }
)

betaRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/connect/{phoneNumber}/password',
    tags: TAG,
    operationId: 'submit_beta_password',
    summary: 'Verify the two-step password (tool submit_beta_password)',
    description:
      'Submits the account’s two-step verification password after `password_required`. The relay proves it to beta by SRP; the password itself never reaches beta, and it is never stored, logged or echoed here. A wrong password keeps the login open (422 password_invalid).',
    request: { params: BetaPhoneParam, body: { required: true, content: { 'application/json': { schema: BetaPasswordBody } } } },
    responses: { 200: { description: 'Verified', content: { 'application/json': { schema: BetaVerifyResult } } }, ...VERIFY_ERRORS },
  }),
  async (c) => {
    const { phoneNumber: phone } = c.req.valid('param')
    return c.json(await verifyStep(c, c.get('tenant').id, phone, { kind: 'password', password: c.req.valid('json').password }), 200)
  }
)

betaRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/connect/{phoneNumber}/status',
    tags: TAG,
    operationId: 'get_beta_status',
    summary: 'Get the beta connection status (tool get_beta_status)',
    description:
      '`connected` is success (with `reason` flood_wait while beta asks the account to slow down and sends are paused); `code_required` and `password_required` wait for the user; `initializing` is starting (or waiting for a QR scan); `disconnected` (logged_out, link_expired, unknown_number, wrong_number, …) and `error` (blocked_by_beta, stranger_flag) need the user. `not_initialized`: no session exists. `live` is true when the relay running the session answered just now.',
    request: { params: BetaPhoneParam },
    responses: { 200: { description: 'The status', content: { 'application/json': { schema: BetaStatusResult } } }, ...statusErrors([400, 401, 404]) },
  }),
  async (c) => {
    const { phoneNumber: phone } = c.req.valid('param')
    const tenant = c.get('tenant')
    await betaAccount(database(c.env.DB), tenant.id, phone)
    const { link, live } = await accountStub(c.env, tenant.id, phone).linkStatus(STATUS_PROBE_TIMEOUT_MS)
    const s = statusOf(link)
    return c.json({ success: true as const, phone_number: phone, ...s, telegram_user_id: link?.upstreamUserId ?? null, live }, 200)
  }
)

betaRoutes.openapi(
  createRoute({
    method: 'delete',
    path: '/{phoneNumber}',
    tags: TAG,
    operationId: 'disconnect_beta',
    summary: 'Log out and remove a beta account (tool disconnect_beta)',
    description:
      'Logs the session out upstream (through the relay, when one is reachable) and removes the account: always `removed`, also for a number that is not on the account (idempotent) and when no relay is reachable. Messages still queued fail; history stays.',
    request: { params: BetaPhoneParam },
    responses: { 200: { description: 'Removed', content: { 'application/json': { schema: BetaRemoved } } }, ...statusErrors([400, 401]) },
  }),
  async (c) => {
    const { phoneNumber: phone } = c.req.valid('param')
    const tenant = c.get('tenant')
    const db = database(c.env.DB)
    const account = await getAccount(db, tenant.id, phone)
    const removed = { success: true as const, phone_number: phone, status: 'removed' as const }
    if (account?.channel !== 'beta') return c.json(removed, 200)
    await removeAccount(c.env, db, account, Date.now())
    return c.json(removed, 200)
  }
)
