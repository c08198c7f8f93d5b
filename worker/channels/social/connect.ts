/**
 * The page inbox's connect flow (spec 3 and 4.6): the user's own app, a connect link, the permission step's
 * callback (code → short-lived → long-lived token → the user's pages: `pages_loaded`), the page choice (subscribe
 * the app to the page, add the `social` account with its linked Instagram account: `connected`), and removal.
 * Plain functions over D1 and the Graph client; the routes only translate HTTP.
 */
import { z } from 'zod'
import { addAccount, removeAccount, statusChange } from '../../account/lifecycle'
import { connectPageTtlMs, encryptionKey, publicOrigin } from '../../config'
import { deleteAccountStatement, getAccount } from '../../db/accounts'
import type { Db } from '../../db/client'
import {
  deleteSocialPage,
  getSocialApp,
  getSocialPage,
  insertSocialFlow,
  insertSocialPage,
  latestSocialFlow,
  listSocialPages,
  socialFlowByState,
  spendSocialState,
  updateSocialFlow,
  upsertSocialApp,
  type SocialAppRow,
  type SocialFlowRow,
} from '../../db/social'
import type { Tenant } from '../../db/tenants'
import { ApiError } from '../../errors'
import { randomBase62, seal, sha256Hex, unseal } from '../../lib/crypto'
import { newId } from '../../lib/ids'
import { signToken, verifyToken } from '../../lib/signed-token'
import { isoOrNull } from '../../lib/time'
import { commitEvents } from '../../webhooks/emit'
import { GraphClient, GraphError, GraphPage } from './graph-client'

/** Where the routes live (spec 4.6: the path segment is `meta`). */
export const SOCIAL_PATH = '/v1/channels/meta'
export const CONNECT_PAGE_PATH = `${SOCIAL_PATH}/connect/page`
export const CALLBACK_PATH = `${SOCIAL_PATH}/oauth/callback`
export const webhookPath = (webhookId: string) => `${SOCIAL_PATH}/webhooks/${webhookId}`

/** How long the user has to pick a page once the pages are loaded. */
export const PAGES_TTL_MS = 30 * 60_000
const TOKEN_PURPOSE = 'social-connect-page'

/** Page tasks that include messaging (Graph's `tasks` on /me/accounts). */
const MESSAGING_TASKS = new Set(['MESSAGING', 'MODERATE', 'MANAGE'])

const StoredPages = z.array(GraphPage)
const PageClaims = z.object({ tenant: z.string(), flow: z.string(), state: z.string() })

export type AppSecrets = { appId: string; configId: string; secret: string; verifyToken: string; webhookId: string }

export async function appSecrets(env: Env, app: SocialAppRow): Promise<AppSecrets> {
  return { appId: app.appId, configId: app.configId, secret: await unseal(encryptionKey(env), app.secret), verifyToken: app.verifyToken, webhookId: app.webhookId }
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

export async function saveApp(env: Env, db: Db, tenantId: string, body: { app_id: string; app_secret: string; configuration_id?: string; config_id?: string }, now: number) {
  const [row] = await upsertSocialApp(db, {
    tenantId,
    webhookId: randomBase62(24),
    appId: body.app_id,
    // The body's schema demands one of the two names.
    configId: body.configuration_id ?? body.config_id ?? '',
    secret: await seal(encryptionKey(env), body.app_secret),
    verifyToken: randomBase62(32),
    createdAt: now,
    updatedAt: now,
  })
  return row!
}

/** Starts a flow: a fresh OAuth state (stored hashed) and a signed link to the hosted page that carries it. */
export async function startConnect(env: Env, db: Db, requestUrl: string, tenantId: string, now: number) {
  if (!(await getSocialApp(db, tenantId))) {
    throw new ApiError(409, 'social_app_required', 'social_app_required: save your own app first with PUT /channels/meta/app (tool set_social_app)')
  }
  const state = randomBase62(32)
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
export async function connectPage(env: Env, db: Db, requestUrl: string, token: string | undefined, now: number): Promise<ConnectPage> {
  if (!token) return { ok: false, status: 403, title: 'Link not valid', message: 'This link is incomplete.' }
  const check = await verifyToken(encryptionKey(env), TOKEN_PURPOSE, token, PageClaims, now)
  if (!check.ok && check.reason === 'expired') return { ok: false, status: 410, title: 'Link expired', message: 'This link has expired. Ask your agent for a new one (connect_social_inbox).' }
  if (!check.ok) return { ok: false, status: 403, title: 'Link not valid', message: 'This link is not valid.' }
  const { tenant, state } = check.payload
  const [app, flow] = await Promise.all([getSocialApp(db, tenant), socialFlowByState(db, await sha256Hex(state))])
  if (!app || !flow || flow.tenantId !== tenant) return { ok: false, status: 403, title: 'Link not valid', message: 'This link is not valid any more.' }
  if (flow.stateUsedAt !== null || flow.status !== 'pending') {
    return { ok: false, status: 409, title: 'Link already used', message: 'This link was already used. Ask your agent for a new one if you need to connect again.' }
  }
  const redirectUri = `${publicOrigin(env, requestUrl)}${CALLBACK_PATH}`
  return { ok: true, dialogUrl: GraphClient.dialogUrl(env, { appId: app.appId, configId: app.configId, redirectUri, state }), expiresAt: check.expiresAt, appId: app.appId }
}

export type CallbackOutcome = { ok: true; pages: number } | { ok: false; status: 400 | 403 | 409 | 410 | 502; title: string; message: string }

/**
 * The permission step's return (state-checked, single use). An unknown state is refused (forged); a spent one is
 * refused (replayed); a lapsed flow is `expired`. Everything else spends the state and ends `pages_loaded` or `failed`.
 */
export async function oauthCallback(
  env: Env,
  db: Db,
  requestUrl: string,
  q: { state?: string; code?: string; error?: string; error_reason?: string },
  now: number,
  graph = new GraphClient(env)
): Promise<CallbackOutcome> {
  if (!q.state) return { ok: false, status: 403, title: 'Not valid', message: 'The answer from the permission screen carries no state.' }
  const hash = await sha256Hex(q.state)
  const flow = await socialFlowByState(db, hash)
  if (!flow) return { ok: false, status: 403, title: 'Not valid', message: 'This answer does not belong to a connect link of this service.' }
  if (flow.stateUsedAt !== null) return { ok: false, status: 409, title: 'Already used', message: 'This answer was already used. Start again from your agent if needed.' }
  if (now > flow.expiresAt) return { ok: false, status: 410, title: 'Link expired', message: 'The connect link lapsed before the permission step finished. Ask your agent for a new one.' }
  const spent = await spendSocialState(db, hash, now)
  if (!spent) return { ok: false, status: 409, title: 'Already used', message: 'This answer was already used.' }
  const fail = async (reason: string, message: string, status: 400 | 502 = 400): Promise<CallbackOutcome> => {
    await updateSocialFlow(db, flow.id, { status: 'failed', reason }, now)
    return { ok: false, status, title: 'Not connected', message }
  }
  if (q.error) return fail(q.error_reason === 'user_denied' ? 'permission_denied' : `oauth_${q.error}`, 'The permissions were not granted. Ask your agent for a new link to try again.')
  if (!q.code) return fail('code_missing', 'The permission screen returned no code.')
  const app = await getSocialApp(db, flow.tenantId)
  if (!app) return fail('app_removed', 'The app was removed from the service while you were connecting.')
  const secrets = await appSecrets(env, app)
  try {
    const short = await graph.exchangeCode(secrets, `${publicOrigin(env, requestUrl)}${CALLBACK_PATH}`, q.code)
    const long = await graph.longLivedToken(secrets, short.access_token)
    const pages = await graph.pages(long.access_token)
    if (pages.length === 0) return fail('no_pages', 'No page was granted. Connect again and pick at least one page.')
    await updateSocialFlow(db, flow.id, { status: 'pages_loaded', reason: null, pages: await seal(encryptionKey(env), JSON.stringify(pages)), expiresAt: now + PAGES_TTL_MS }, now)
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

async function loadedFlow(env: Env, db: Db, tenantId: string, now: number): Promise<{ flow: SocialFlowRow; pages: GraphPage[] }> {
  const flow = await latestSocialFlow(db, tenantId)
  const status = flow ? flowStatus(flow, now) : null
  if (!flow || status !== 'pages_loaded' || !flow.pages) {
    const hint = status === 'expired' ? 'the last connect flow expired' : status ? `the last connect flow is ${status}` : 'no connect flow was started'
    throw new ApiError(409, 'pages_not_loaded', `pages_not_loaded: no pages to choose from: ${hint}; call POST /channels/meta/connect and finish the permission step`)
  }
  return { flow, pages: StoredPages.parse(JSON.parse(await unseal(encryptionKey(env), flow.pages))) }
}

export function pageChoice(p: GraphPage) {
  return {
    id: p.id,
    name: p.name,
    instagram: p.instagram_business_account ? { id: p.instagram_business_account.id, username: p.instagram_business_account.username ?? null } : null,
    can_message: p.tasks === undefined || p.tasks.some((t) => MESSAGING_TASKS.has(t)),
  }
}

export async function loadedPages(env: Env, db: Db, tenantId: string, now: number) {
  return (await loadedFlow(env, db, tenantId, now)).pages.map(pageChoice)
}

/**
 * Picks one page of the loaded flow: the `social` account (id = the page id, counted once against the cap with its
 * Instagram account) is added, the app is subscribed to the page, and the flow ends `connected`.
 */
export async function selectPage(env: Env, db: Db, tenant: Tenant, pageId: string, now: number, graph = new GraphClient(env)) {
  const { flow, pages } = await loadedFlow(env, db, tenant.id, now)
  const page = pages.find((p) => p.id === pageId)
  if (!page) throw new ApiError(404, 'page_not_found', `page_not_found: page ${pageId} is not among the pages you granted; see GET /channels/meta/pages`)
  if (!pageChoice(page).can_message) throw new ApiError(422, 'page_not_messageable', `page_not_messageable: your role on ${page.name} does not include messaging`)
  // Added `connecting` within the plan's cap (a page already connected here is the same account: a reconnect).
  const { account, created } = await addAccount(db, tenant, { id: page.id, channel: 'social', identifier: page.name, status: 'connecting' }, now)
  try {
    await graph.subscribe(page.id, page.access_token)
  } catch (err) {
    if (!(err instanceof GraphError)) throw err
    // Never connected, so nothing was announced: the row goes without an event.
    if (created) await db.batch([deleteAccountStatement(db, tenant.id, page.id)])
    await updateSocialFlow(db, flow.id, { status: 'failed', reason: `subscribe_failed_${err.code ?? 'unavailable'}` }, now)
    throw new ApiError(502, 'upstream_error', `Subscribing the app to ${page.name} failed: ${err.message}`)
  }
  const ig = page.instagram_business_account
  const change = statusChange(db, account, 'connected', null, now, page.name)
  await commitEvents(env, db, [
    insertSocialPage(db, {
      tenantId: tenant.id,
      accountId: page.id,
      pageId: page.id,
      pageName: page.name,
      instagramId: ig?.id ?? null,
      instagramUsername: ig?.username ?? null,
      token: await seal(encryptionKey(env), page.access_token),
      createdAt: now,
      updatedAt: now,
    }),
    // The choice is made: the other pages' tokens are not kept.
    updateSocialFlow(db, flow.id, { status: 'connected', reason: null, pages: null, accountId: page.id }, now),
    ...change.statements,
  ])
  return status(env, db, tenant.id, now)
}

/** The page-inbox state: the latest flow, and the page and linked account it connected. */
export async function status(env: Env, db: Db, tenantId: string, now: number) {
  const [app, flow, pages] = await Promise.all([getSocialApp(db, tenantId), latestSocialFlow(db, tenantId), listSocialPages(db, tenantId)])
  const page = (flow?.accountId ? pages.find((p) => p.accountId === flow.accountId) : undefined) ?? pages[0]
  const account = page ? await getAccount(db, tenantId, page.accountId) : undefined
  let state: 'not_connected' | 'pending' | 'pages_loaded' | 'connected' | 'failed' | 'expired' = flow ? flowStatus(flow, now) : 'not_connected'
  let reason = flow?.reason ?? null
  if (state === 'connected' && !account) state = 'not_connected'
  if (state === 'connected' && account?.status === 'disconnected') {
    state = 'failed'
    reason = account.statusReason
  }
  return {
    success: true as const,
    status: state,
    reason: state === 'connected' || state === 'not_connected' ? null : reason,
    account_id: account?.id ?? null,
    page: page ? { id: page.pageId, name: page.pageName } : null,
    instagram: page?.instagramId ? { id: page.instagramId, username: page.instagramUsername } : null,
    app_id: app?.appId ?? null,
    connected_at: isoOrNull(account?.connectedAt),
    expires_at: flow && (state === 'pending' || state === 'pages_loaded') ? flow.expiresAt : null,
  }
}

/** Removes the tenant's page accounts (or the one named): unsubscribes the app (best effort), then the rows. */
export async function disconnect(env: Env, db: Db, tenantId: string, accountId: string | undefined, now: number, graph = new GraphClient(env)) {
  const pages = (await listSocialPages(db, tenantId)).filter((p) => accountId === undefined || p.accountId === accountId)
  const removed: string[] = []
  for (const page of pages) {
    await teardownPage(env, graph, page.pageId, page.token)
    await db.batch([deleteSocialPage(db, tenantId, page.accountId)])
    const account = await getAccount(db, tenantId, page.accountId)
    if (account) await removeAccount(env, db, account, now)
    removed.push(page.accountId)
  }
  return { success: true as const, status: removed.length ? ('removed' as const) : ('not_connected' as const), removed }
}

/** Undoes the page's app subscription; the removal goes ahead when Graph cannot be reached or the token is dead. */
export async function teardownPage(env: Env, graph: GraphClient, pageId: string, sealedToken: string): Promise<void> {
  try {
    await graph.unsubscribe(pageId, await unseal(encryptionKey(env), sealedToken))
  } catch (err) {
    if (!(err instanceof GraphError)) throw err
  }
}

export { getSocialPage }
