/**
 * /connect/alpha-web: the hosted connect page of spec 4.3 (no login; a signed, expiring `token` names the account),
 * its JSON state endpoint polled by the page, and the "get a new code" restart after a code lapsed. While the phone
 * asks for a passkey (tenant setting alpha_passkey_linking), the state carries the ceremony: the one-time passkey
 * link for the helper on web.whatsapp.com, then the code to compare (passkey-routes.ts serves the rest).
 */
import { Hono } from 'hono'
import { passkeyHelperOrigins } from '../../config'
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
import type { SessionRecord } from '../../account/session/state'
import { maskPhone, PAGE_HEADERS, pageCsp, type PageAccess, type PageClaims } from '../account-page'
import { passkeyRoutes } from './passkey-routes'
import { ceremonyLink, PASSKEY_API_PATH } from './passkey-token'

export const connectPageRoutes = new Hono<AppEnv>()

/**
 * A lapsed or broken link may be restarted from the page; a ban, or a passkey demand with passkey linking off, would
 * only fail again. A passkey ceremony that ended is restarted by the owner, never by the relay.
 */
const RESTARTABLE = new Set([
  'link_expired',
  'logged_out',
  'replaced',
  'unresponsive',
  'session_unreadable',
  'passkey_expired',
  'passkey_rejected',
  'passkey_timeout',
])

const CONNECT_PAGE_PATH = ALPHA_PAGE.path

const claims = (env: Env, token: string | undefined) => ALPHA_PAGE.open(env, token, Date.now())

/** The passkey ceremony as the page shows it: the link to hand the helper while it waits, then the code. */
async function passkeyState(env: Env, requestUrl: string, c: PageClaims, record: SessionRecord) {
  const p = record.passkey
  if (!p) return null
  const stage = p.code ? 'code' : p.used ? 'accepted' : 'waiting'
  const live = stage === 'waiting' && Date.now() < p.expiresAt
  const passkeyLink = live ? await ceremonyLink(env, requestUrl, { tenant: c.tenant, account: c.account, ceremony: p.ceremony }, p.expiresAt) : null
  // web.whatsapp.com with the link in its fragment (never sent to a server): the extension's helper picks it up.
  const [helperOrigin] = passkeyHelperOrigins(env)
  return {
    stage,
    link: passkeyLink,
    open_url: passkeyLink && helperOrigin ? `${helperOrigin}/#gateway-passkey=${encodeURIComponent(passkeyLink)}` : null,
    expires_at: stage === 'code' ? p.codeExpiresAt : p.expiresAt,
    code: p.code,
    confirm: p.confirm && record.session === 'passkey_code',
  }
}

async function pageState(env: Env, requestUrl: string, c: PageClaims, pageExpiresAt: number) {
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
      passkey: null,
    }
  }
  const { view: v, record } = await sessionStatus(env, c.tenant, c.account)
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
    passkey: status === 'connecting' && record ? await passkeyState(env, requestUrl, c, record) : null,
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
      confirmPath: `${PASSKEY_API_PATH}/confirm${q}`,
      guidePath: PASSKEY_API_PATH,
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
  return c.json(await pageState(c.env, c.req.url, page.claims, page.expiresAt), 200, PAGE_HEADERS)
})

connectPageRoutes.post(`${CONNECT_PAGE_PATH}/restart`, async (c) => {
  const page = await claims(c.env, c.req.query('token'))
  const state = await pageState(c.env, c.req.url, page.claims, page.expiresAt)
  if (!state.can_restart) return c.json(state, 200, PAGE_HEADERS)
  const { tenant: tenantId, account: phone } = page.claims
  const db = await knownTenantDb(c.env, tenantId)
  const [tenant, account, { record }] = await Promise.all([getTenant(db, tenantId), getAccount(db, tenantId, phone), sessionStatus(c.env, tenantId, phone)])
  if (!tenant || !account || !record || record.linkMethod === 'code') return c.json(state, 200, PAGE_HEADERS)
  await startLink(c.env, db, tenant, phone, { linkMethod: record.linkMethod, forceNew: false, options: record.options })
  return c.json(await pageState(c.env, c.req.url, page.claims, page.expiresAt), 200, PAGE_HEADERS)
})

connectPageRoutes.route('/', passkeyRoutes)
