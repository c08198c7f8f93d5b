/**
 * /connect/alpha-web: the hosted connect page of spec 4.3 (no login; a signed, expiring `token` names the account),
 * its JSON state endpoint polled by the page, and the "get a new code" restart after a code lapsed.
 */
import { Hono } from 'hono'
import { accountStub } from '../../lib/objects'
import { ensureConnecting, startLink } from './connect'
import { connectPageError, connectPageHtml } from './connect-page-html'
import { CONNECT_PAGE_PATH, readConnectToken, type ConnectClaims } from './connect-token'
import { getAccount } from '../../db/accounts'
import { database } from '../../db/client'
import { getTenant } from '../../db/tenants'
import type { AppEnv } from '../../env'
import { ApiError } from '../../errors'
import { randomBase62 } from '../../lib/crypto'
import { qrDataUrl } from '../../lib/qr-png'

export const connectPageRoutes = new Hono<AppEnv>()

/** A lapsed or broken link may be restarted from the page; a ban or a passkey demand would only fail again. */
const RESTARTABLE = new Set(['link_expired', 'logged_out', 'replaced', 'unresponsive', 'session_unreadable'])

const NO_STORE = { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'X-Content-Type-Options': 'nosniff' }

export function maskPhone(phone: string): string {
  return phone.length <= 7 ? phone : `${phone.slice(0, 4)}${'•'.repeat(phone.length - 7)}${phone.slice(-3)}`
}

async function claims(env: Env, token: string | undefined): Promise<{ claims: ConnectClaims; expiresAt: number }> {
  if (!token) throw new ApiError(403, 'invalid_token', 'This link is incomplete: the token is missing')
  const check = await readConnectToken(env, token, Date.now())
  if (check.ok) return { claims: check.payload, expiresAt: check.expiresAt }
  if (check.reason === 'expired') throw new ApiError(410, 'link_expired', 'This link has expired; ask for a new one')
  throw new ApiError(403, 'invalid_token', 'This link is not valid')
}

async function pageState(env: Env, c: ConnectClaims, pageExpiresAt: number) {
  const db = database(env.DB)
  const account = await getAccount(db, c.tenant, c.account)
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
  const { view: v } = await accountStub(env, c.tenant, c.account).linkStatus(null)
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
  let page: { claims: ConnectClaims; expiresAt: number }
  try {
    page = await claims(c.env, token)
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    return c.html(connectPageError(err.status === 410 ? 'Link expired' : 'Link not valid', err.message), err.status, NO_STORE)
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
      ...NO_STORE,
      'Content-Security-Policy': `default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    }
  )
})

connectPageRoutes.get(`${CONNECT_PAGE_PATH}/state`, async (c) => {
  const page = await claims(c.env, c.req.query('token'))
  return c.json(await pageState(c.env, page.claims, page.expiresAt), 200, NO_STORE)
})

connectPageRoutes.post(`${CONNECT_PAGE_PATH}/restart`, async (c) => {
  const page = await claims(c.env, c.req.query('token'))
  const state = await pageState(c.env, page.claims, page.expiresAt)
  if (!state.can_restart) return c.json(state, 200, NO_STORE)
  const { tenant: tenantId, account: phone } = page.claims
  const db = database(c.env.DB)
  const [tenant, account, { link }] = await Promise.all([
    getTenant(db, tenantId),
    getAccount(db, tenantId, phone),
    accountStub(c.env, tenantId, phone).linkStatus(null),
  ])
  if (!tenant || !account || !link || link.linkMethod === 'code') return c.json(state, 200, NO_STORE)
  await ensureConnecting(db, tenant, phone)
  await startLink(c.env, tenantId, { phone, linkMethod: link.linkMethod, forceNew: false, options: link.options })
  return c.json(await pageState(c.env, page.claims, page.expiresAt), 200, NO_STORE)
})
