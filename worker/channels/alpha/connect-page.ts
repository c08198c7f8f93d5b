/**
 * /connect/alpha-web: the hosted connect page of spec 4.3 (no login; a signed, expiring `token` names the account),
 * its JSON state endpoint polled by the page, and the "get a new code" restart after a code lapsed.
 */
import { Hono } from 'hono'
import { sessionStatus } from '../relay-run/session'
import { startLink } from './connect'
import { connectPageError, connectPageHtml } from './connect-page-html'
import { ALPHA_PAGE } from './connect-token'
import { getAccount } from '../../db/accounts'
import { knownTenantDb, tenantDb } from '../../db/placement'
import { getTenant } from '../../db/tenants'
import type { AppEnv } from '../../env'
import { ApiError } from '../../errors'
import { randomBase62 } from '../../lib/crypto'
import { qrDataUrl } from '../../lib/qr-png'
import { maskPhone, PAGE_HEADERS, pageCsp, type PageAccess, type PageClaims } from '../account-page'

export const connectPageRoutes = new Hono<AppEnv>()

/** A lapsed or broken link may be restarted from the page; a ban or a passkey demand would only fail again. */
const RESTARTABLE = new Set(['link_expired', 'logged_out', 'replaced', 'unresponsive', 'session_unreadable'])

const CONNECT_PAGE_PATH = ALPHA_PAGE.path

const claims = (env: Env, token: string | undefined) => ALPHA_PAGE.open(env, token, Date.now())

async function pageState(env: Env, c: PageClaims, pageExpiresAt: number) {
  const db = await tenantDb(env, c.tenant)
  const account = db && (await getAccount(db, c.tenant, c.account))
  const base = { page_expires_at: pageExpiresAt, page_expired: false }
  if (account?.channel !== 'alpha_web') {
    return {
      ...base,
      status: 'disconnected',
      reason: 'removed',
      message: 'This number is no longer on the account.',
      qr_data_url: null,
      qr_expires_at: null,
      pairing_code: null,
      pairing_code_expires_at: null,
      can_restart: false,
    }
  }
  const { view: v } = await sessionStatus(env, c.tenant, c.account)
  const status = account.status === 'connected' ? 'connected' : v.status
  return {
    ...base,
    status,
    reason: v.reason,
    message: v.message,
    qr_data_url: v.qr ? await qrDataUrl(v.qr) : null,
    qr_expires_at: v.qrExpiresAt,
    pairing_code: v.pairingCode,
    pairing_code_expires_at: v.pairingCodeExpiresAt,
    can_restart: status === 'disconnected' && (v.reason === null || RESTARTABLE.has(v.reason)),
  }
}

connectPageRoutes.get(CONNECT_PAGE_PATH, async (c) => {
  const token = c.req.query('token')
  let page: PageAccess
  try {
    page = await claims(c.env, token)
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    return c.html(connectPageError(err.status === 410 ? 'Link expired' : 'Link not valid', err.message), err.status, PAGE_HEADERS)
  }
  const nonce = randomBase62(22)
  const q = `?token=${encodeURIComponent(token ?? '')}`
  return c.html(
    connectPageHtml({
      phoneMasked: maskPhone(page.claims.account),
      statePath: `${CONNECT_PAGE_PATH}/state${q}`,
      restartPath: `${CONNECT_PAGE_PATH}/restart${q}`,
      pageExpiresAt: page.expiresAt,
      nonce,
    }),
    200,
    {
      ...PAGE_HEADERS,
      'Content-Security-Policy': pageCsp(nonce),
    }
  )
})

connectPageRoutes.get(`${CONNECT_PAGE_PATH}/state`, async (c) => {
  const page = await claims(c.env, c.req.query('token'))
  return c.json(await pageState(c.env, page.claims, page.expiresAt), 200, PAGE_HEADERS)
})

connectPageRoutes.post(`${CONNECT_PAGE_PATH}/restart`, async (c) => {
  const page = await claims(c.env, c.req.query('token'))
  const state = await pageState(c.env, page.claims, page.expiresAt)
  if (!state.can_restart) return c.json(state, 200, PAGE_HEADERS)
  const { tenant: tenantId, account: phone } = page.claims
  const db = await knownTenantDb(c.env, tenantId)
  const [tenant, account, { record }] = await Promise.all([getTenant(db, tenantId), getAccount(db, tenantId, phone), sessionStatus(c.env, tenantId, phone)])
  if (!tenant || !account || !record || record.linkMethod === 'code') return c.json(state, 200, PAGE_HEADERS)
  await startLink(c.env, db, tenant, phone, { linkMethod: record.linkMethod, forceNew: false, options: record.options })
  return c.json(await pageState(c.env, page.claims, page.expiresAt), 200, PAGE_HEADERS)
})
