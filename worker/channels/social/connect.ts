/**
 * The page inbox's connect flow up to the pages (spec 3 and 4.6): the user's own app, a connect link to the hosted
 * page, and the permission step's callback (code → short-lived → long-lived token → the user's pages:
 * `pages_loaded`, or `failed` with a reason; a lapsed flow is `expired`). Plain functions over D1 and the Graph
 * client; the routes only translate HTTP. Choosing a page and removal are in pages.ts.
 *
 * The app is the directory's (its webhook id is how a Graph callback finds the tenant); flows, like the pages, are on
 * the tenant's shard. The OAuth state starts with the tenant id (`ten_….<random>`), so the callback, which Graph
 * sends with nothing but the state, knows which shard holds its flow.
 */
import { z } from 'zod'
import { connectPageTtlMs, encryptionKey, keyring, publicOrigin } from '../../config'
import type { Db } from '../../db/client'
import { tenantDb } from '../../db/placement'
import { directory, DIRECTORY_SHARD, shardDb } from '../../db/shards'
import {
  getSocialApp,
  insertSocialFlow,
  socialFlowByState,
  spendSocialState,
  updateSocialFlow,
  upsertSocialApp,
  type SocialAppRow,
  type SocialFlowRow,
  socialSealedAt,
} from '../../db/social'
import { ApiError } from '../../errors'
import { randomBase62, sha256Hex } from '../../lib/crypto'
import { seal, unseal } from '../../lib/sealed'
import { newId } from '../../lib/ids'
import { signToken, verifyToken } from '../../lib/signed-token'
import { GraphClient, GraphError } from './graph-client'

/** Where the routes live (spec 4.6: the path segment is `meta`). */
export const SOCIAL_PATH = '/v1/channels/meta'
export const CONNECT_PAGE_PATH = `${SOCIAL_PATH}/connect/page`
export const CALLBACK_PATH = `${SOCIAL_PATH}/oauth/callback`
export const webhookPath = (webhookId: string) => `${SOCIAL_PATH}/webhooks/${webhookId}`

/** How long the user has to pick a page once the pages are loaded. */
export const PAGES_TTL_MS = 30 * 60_000
const TOKEN_PURPOSE = 'social-connect-page'

const PageClaims = z.object({ tenant: z.string(), flow: z.string(), state: z.string() })

export type AppSecrets = { appId: string; configId: string; secret: string; verifyToken: string; webhookId: string }

export async function appSecrets(env: Env, app: SocialAppRow): Promise<AppSecrets> {
  return {
    appId: app.appId,
    configId: app.configId,
    secret: await unseal(keyring(env), socialSealedAt.appSecret(app.tenantId), app.secret),
    verifyToken: app.verifyToken,
    webhookId: app.webhookId,
  }
}

export function appAnswer(env: Env, requestUrl: string, app: SocialAppRow) {
  const origin = publicOrigin(env, requestUrl)
  return {
    success: true as const,
    app_id: app.appId,
    configuration_id: app.configId,
    app_secret_set: true as const,
    redirect_uri: `${origin}${CALLBACK_PATH}`,
    callback_url: `${origin}${webhookPath(app.webhookId)}`,
    verify_token: app.verifyToken,
  }
}

export async function saveApp(
  env: Env,
  dir: Db,
  tenantId: string,
  body: { app_id: string; app_secret: string; configuration_id?: string; config_id?: string },
  now: number
) {
  const [row] = await upsertSocialApp(dir, {
    tenantId,
    webhookId: randomBase62(24),
    appId: body.app_id,
    // The body's schema demands one of the two names.
    configId: body.configuration_id ?? body.config_id ?? '',
    secret: await seal(keyring(env), socialSealedAt.appSecret(tenantId), body.app_secret),
    verifyToken: randomBase62(32),
    createdAt: now,
    updatedAt: now,
  })
  return row!
}

/** The tenant an OAuth state names (before shards a state was random only: those flows are on shard 0). */
export function stateTenant(state: string): string | null {
  const dot = state.indexOf('.')
  return dot > 0 ? state.slice(0, dot) : null
}

/** Starts a flow: a fresh OAuth state (stored hashed) and a signed link to the hosted page that carries it. */
export async function startConnect(env: Env, dir: Db, db: Db, requestUrl: string, tenantId: string, now: number) {
  if (!(await getSocialApp(dir, tenantId))) {
    throw new ApiError(409, 'social_app_required', 'social_app_required: save your own app first with PUT /channels/meta/app (tool set_social_app)')
  }
  const state = `${tenantId}.${randomBase62(32)}`
  const expiresAt = now + connectPageTtlMs(env)
  const flow = newId('sfl')
  await insertSocialFlow(db, { id: flow, tenantId, status: 'pending', stateHash: await sha256Hex(state), expiresAt, createdAt: now, updatedAt: now })
  const token = await signToken(encryptionKey(env), TOKEN_PURPOSE, { tenant: tenantId, flow, state }, expiresAt)
  return { connectUrl: `${publicOrigin(env, requestUrl)}${CONNECT_PAGE_PATH}?token=${encodeURIComponent(token)}`, expiresAt }
}

export type ConnectPage =
  | { ok: true; dialogUrl: string; expiresAt: number; appId: string }
  | { ok: false; status: 403 | 409 | 410; title: string; message: string }

/** What the hosted page shows: a way to the permission screen while its flow is still pending and unexpired. */
export async function connectPage(env: Env, requestUrl: string, token: string | undefined, now: number): Promise<ConnectPage> {
  if (!token) return { ok: false, status: 403, title: 'Link not valid', message: 'This link is incomplete.' }
  const check = await verifyToken(encryptionKey(env), TOKEN_PURPOSE, token, PageClaims, now)
  if (!check.ok && check.reason === 'expired')
    return { ok: false, status: 410, title: 'Link expired', message: 'This link has expired. Ask your agent for a new one (connect_social_inbox).' }
  if (!check.ok) return { ok: false, status: 403, title: 'Link not valid', message: 'This link is not valid.' }
  const { tenant, state } = check.payload
  const db = await tenantDb(env, tenant)
  const [app, flow] = await Promise.all([getSocialApp(directory(env), tenant), db && socialFlowByState(db, await sha256Hex(state))])
  if (!app || !flow || flow.tenantId !== tenant) return { ok: false, status: 403, title: 'Link not valid', message: 'This link is not valid any more.' }
  if (flow.stateUsedAt !== null || flow.status !== 'pending') {
    return {
      ok: false,
      status: 409,
      title: 'Link already used',
      message: 'This link was already used. Ask your agent for a new one if you need to connect again.',
    }
  }
  const redirectUri = `${publicOrigin(env, requestUrl)}${CALLBACK_PATH}`
  return {
    ok: true,
    dialogUrl: GraphClient.dialogUrl(env, { appId: app.appId, configId: app.configId, redirectUri, state }),
    expiresAt: check.expiresAt,
    appId: app.appId,
  }
}

export type CallbackOutcome = { ok: true; pages: number } | { ok: false; status: 400 | 403 | 409 | 410 | 502; title: string; message: string }

/**
 * The permission step's return (state-checked, single use). An unknown state is refused (forged); a spent one is
 * refused (replayed); a lapsed flow is `expired`. Everything else spends the state and ends `pages_loaded` or `failed`.
 */
export async function oauthCallback(
  env: Env,
  requestUrl: string,
  q: { state?: string; code?: string; error?: string; error_reason?: string },
  now: number,
  graph = new GraphClient(env)
): Promise<CallbackOutcome> {
  if (!q.state) return { ok: false, status: 403, title: 'Not valid', message: 'The answer from the permission screen carries no state.' }
  const hash = await sha256Hex(q.state)
  const tenant = stateTenant(q.state)
  // A state from before shards names no tenant: its flow is on shard 0, where every tenant then was.
  const db = tenant === null ? shardDb(env, DIRECTORY_SHARD) : await tenantDb(env, tenant)
  const flow = db && (await socialFlowByState(db, hash))
  if (!db || !flow) return { ok: false, status: 403, title: 'Not valid', message: 'This answer does not belong to a connect link of this service.' }
  if (flow.stateUsedAt !== null)
    return { ok: false, status: 409, title: 'Already used', message: 'This answer was already used. Start again from your agent if needed.' }
  if (now > flow.expiresAt)
    return {
      ok: false,
      status: 410,
      title: 'Link expired',
      message: 'The connect link lapsed before the permission step finished. Ask your agent for a new one.',
    }
  const spent = await spendSocialState(db, hash, now)
  if (!spent) return { ok: false, status: 409, title: 'Already used', message: 'This answer was already used.' }
  const fail = async (reason: string, message: string, status: 400 | 502 = 400): Promise<CallbackOutcome> => {
    await updateSocialFlow(db, flow.id, { status: 'failed', reason }, now)
    return { ok: false, status, title: 'Not connected', message }
  }
  if (q.error)
    return fail(
      q.error_reason === 'user_denied' ? 'permission_denied' : `oauth_${q.error}`,
      'The permissions were not granted. Ask your agent for a new link to try again.'
    )
  if (!q.code) return fail('code_missing', 'The permission screen returned no code.')
  const app = await getSocialApp(directory(env), flow.tenantId)
  if (!app) return fail('app_removed', 'The app was removed from the service while you were connecting.')
  const secrets = await appSecrets(env, app)
  try {
    const short = await graph.exchangeCode(secrets, `${publicOrigin(env, requestUrl)}${CALLBACK_PATH}`, q.code)
    const long = await graph.longLivedToken(secrets, short.access_token)
    const pages = await graph.pages(long.access_token)
    if (pages.length === 0) return fail('no_pages', 'No page was granted. Connect again and pick at least one page.')
    await updateSocialFlow(
      db,
      flow.id,
      {
        status: 'pages_loaded',
        reason: null,
        pages: await seal(keyring(env), socialSealedAt.flowPages(flow.tenantId, flow.id), JSON.stringify(pages)),
        expiresAt: now + PAGES_TTL_MS,
      },
      now
    )
    return { ok: true, pages: pages.length }
  } catch (err) {
    if (!(err instanceof GraphError)) throw err
    // Graph's 100/36007-style answers mean the code lapsed or was refused: the flow is over either way.
    const reason = err.subcode === 36007 ? 'code_expired' : err.code === null ? 'graph_unavailable' : `graph_error_${err.code}`
    return fail(reason, `The token exchange failed: ${err.message}`, err.code === null ? 502 : 400)
  }
}

/** `expired` is a pending or pages_loaded flow past its deadline. */
export function flowStatus(flow: SocialFlowRow, now: number): 'pending' | 'pages_loaded' | 'connected' | 'failed' | 'expired' {
  if ((flow.status === 'pending' || flow.status === 'pages_loaded') && now > flow.expiresAt) return 'expired'
  return flow.status
}
