/**
 * The page choice and what follows it (spec 4.6, 8): list the loaded pages, pick one (the app is subscribed to it
 * and the `social` account is added through the account lifecycle, with the page's linked Instagram account as its
 * second surface: `connected`), the state, and removal.
 */
import { z } from 'zod'
import { addAccount, removeAccount } from '../lifecycle'
import { statusChange } from '../../events/account-status'
import { keyring } from '../../config'
import { deleteAccountStatement, getAccount } from '../../db/accounts'
import type { Db } from '../../db/client'
import { directory } from '../../db/shards'
import {
  deleteSocialPage,
  getSocialApp,
  insertSocialPage,
  latestSocialFlow,
  listSocialPages,
  socialSealedAt,
  updateSocialFlow,
  type SocialFlowRow,
  type SocialPageRow,
} from '../../db/social'
import type { Tenant } from '../../db/tenants'
import { ApiError } from '../../errors'
import { seal, unseal } from '../../lib/sealed'
import { isoOrNull } from '../../lib/time'
import { commitEvents } from '../../webhooks/emit'
import { flowStatus } from './connect'
import { GraphClient, GraphError, GraphPage } from './graph-client'

/** Page tasks that include messaging (Graph's `tasks` on /me/accounts). */
const MESSAGING_TASKS = new Set(['MESSAGING', 'MODERATE', 'MANAGE'])

const StoredPages = z.array(GraphPage)

async function loadedFlow(env: Env, db: Db, tenantId: string, now: number): Promise<{ flow: SocialFlowRow; pages: GraphPage[] }> {
  const flow = await latestSocialFlow(db, tenantId)
  const status = flow ? flowStatus(flow, now) : null
  if (!flow || status !== 'pages_loaded' || !flow.pages) {
    const hint = status === 'expired' ? 'the last connect flow expired' : status ? `the last connect flow is ${status}` : 'no connect flow was started'
    throw new ApiError(
      409,
      'pages_not_loaded',
      `pages_not_loaded: no pages to choose from: ${hint}; call POST /channels/meta/connect and finish the permission step`
    )
  }
  return { flow, pages: StoredPages.parse(JSON.parse(await unseal(keyring(env), socialSealedAt.flowPages(flow.tenantId, flow.id), flow.pages))) }
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
  if (!pageChoice(page).can_message)
    throw new ApiError(422, 'page_not_messageable', `page_not_messageable: your role on ${page.name} does not include messaging`)
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
      token: await seal(keyring(env), socialSealedAt.pageToken(tenant.id, page.id), page.access_token),
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
  const [app, flow, pages] = await Promise.all([getSocialApp(directory(env), tenantId), latestSocialFlow(db, tenantId), listSocialPages(db, tenantId)])
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
    await teardownPage(env, graph, page)
    await db.batch([deleteSocialPage(db, tenantId, page.accountId)])
    const account = await getAccount(db, tenantId, page.accountId)
    if (account) await removeAccount(env, db, account, now)
    removed.push(page.accountId)
  }
  return { success: true as const, status: removed.length ? ('removed' as const) : ('not_connected' as const), removed }
}

/** Undoes the page's app subscription; the removal goes ahead when Graph cannot be reached or the token is dead. */
export async function teardownPage(env: Env, graph: GraphClient, page: SocialPageRow): Promise<void> {
  try {
    await graph.unsubscribe(page.pageId, await unseal(keyring(env), socialSealedAt.pageToken(page.tenantId, page.accountId), page.token))
  } catch (err) {
    if (!(err instanceof GraphError)) throw err
  }
}
