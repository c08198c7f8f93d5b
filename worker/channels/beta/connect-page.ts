/**
 * /v1/channels/beta/connect/page: beta's hosted login page (spec 4.4), its JSON state and its code and password
 * submissions. The signed `token` is the only permission: these are the channel's public routes, mounted ahead of
 * /v1's API-key check, so only these exact paths skip it. Submissions run `verifyStep`, the REST verify routes' own
 * path (account check, RL_LOGIN_STEP, the relay's verdict), so statuses and error codes are the same; a code or
 * password is never stored, logged or echoed.
 */
import { createRoute, z } from '@hono/zod-openapi'
import { createMiddleware } from 'hono/factory'
import { BetaCodeBody, BetaPageQuery, BetaPageState, BetaPasswordBody, BetaVerifyResult } from '../../../schema/api/beta'
import { getAccount } from '../../db/accounts'
import type { Db } from '../../db/client'
import { directory, shardDb } from '../../db/shards'
import { getTenant } from '../../db/tenants'
import type { AppEnv } from '../../env'
import { ApiError } from '../../errors'
import { randomBase62 } from '../../lib/crypto'
import { statusErrors } from '../../lib/openapi-responses'
import { qrDataUrl } from '../../lib/qr-png'
import { resourceApp } from '../../validate'
import { maskPhone, PAGE_HEADERS, pageCsp, type PageAccess, type PageClaims } from '../account-page'
import { sessionStatus } from '../relay-run/session'
import { VERIFY_ERROR_TEXT, verifyStep } from './connect'
import { betaPageError, betaPageHtml } from './connect-page-html'
import { BETA_PAGE, BETA_PAGE_BASE } from './connect-token'
import { statusOf } from './status'

const TAG = ['beta channel']
const LINK_TEXT = { 403: 'invalid_token: the link is incomplete, altered or not for this page', 410: 'link_expired: the link is older than 30 minutes' }
const html = (description: string) => ({ description, content: { 'text/html': { schema: z.string() } } })

/** Paths relative to /v1/channels/beta, as the OpenAPI document lists them; served at BETA_PAGE_BASE + path. */
const pageRoute = createRoute({
  method: 'get',
  path: '/connect/page',
  tags: TAG,
  operationId: 'get_beta_connect_page',
  summary: 'The hosted login page (`connect_url`; no API key)',
  description:
    'A phone-sized page for the user: in code mode it asks for the login code and then, if the account has one, the two-step password; in qr mode it shows the login QR, replaced before each token lapses, then the password step if needed; then a success state. It authenticates by its signed `token` alone and works for 30 minutes.',
  security: [],
  request: { query: BetaPageQuery },
  responses: { 200: html('The page'), 403: html(LINK_TEXT[403]), 410: html(LINK_TEXT[410]) },
})

const stateRoute = createRoute({
  method: 'get',
  path: '/connect/page/state',
  tags: TAG,
  operationId: 'get_beta_connect_page_state',
  summary: 'The hosted page’s login state (polled by the page; token, no API key)',
  description: 'What the page shows next: the step the login waits for, the current QR in qr mode, and when the link lapses.',
  security: [],
  request: { query: BetaPageQuery },
  responses: {
    200: { description: 'The state', content: { 'application/json': { schema: BetaPageState } } },
    ...statusErrors([403, 410], LINK_TEXT),
  },
})

const STEP_ERRORS = statusErrors([400, 403, 404, 409, 410, 422, 429, 502, 503], {
  ...VERIFY_ERROR_TEXT,
  403: `${LINK_TEXT[403]}; or number_banned`,
  404: 'The number is no longer on the account, or unknown_number (no beta account upstream)',
  410: `${LINK_TEXT[410]}; or code_expired: a new code was sent, enter that one`,
})

const stepRoute = <S extends typeof BetaCodeBody | typeof BetaPasswordBody>(step: 'code' | 'password', schema: S, what: string) =>
  createRoute({
    method: 'post',
    path: `/connect/page/${step}`,
    tags: TAG,
    operationId: `submit_beta_connect_page_${step}`,
    summary: `The hosted page’s ${what} (token, no API key)`,
    description: `The page’s own ${what} submission: the same step, answers and errors as POST /channels/beta/connect/{phoneNumber}/${step}, for the number the token names, counted against the same limit.`,
    security: [],
    request: { query: BetaPageQuery, body: { required: true, content: { 'application/json': { schema } } } },
    responses: { 200: { description: 'Verified', content: { 'application/json': { schema: BetaVerifyResult } } }, ...STEP_ERRORS },
  })

const codeRoute = stepRoute('code', BetaCodeBody, 'login code')
const passwordRoute = stepRoute('password', BetaPasswordBody, 'two-step password')

/** The page's operations for the OpenAPI document (registered under the channel's path by routes.ts). */
export const PAGE_OPERATIONS = [pageRoute, stateRoute, codeRoute, passwordRoute]

/**
 * The token's claims, for a tenant that still has the API (a link outlives nothing its key could not do), with the
 * tenant's shard.
 */
async function openPage(env: Env, token: string | undefined): Promise<PageAccess & { db: Db }> {
  const page = await BETA_PAGE.open(env, token, Date.now())
  const tenant = await getTenant(directory(env), page.claims.tenant)
  if (!tenant?.apiEnabled) throw new ApiError(403, 'invalid_token', 'This link is not valid any more')
  return { ...page, db: shardDb(env, tenant.shard) }
}

async function pageState(env: Env, db: Db, claims: PageClaims, pageExpiresAt: number, now: number): Promise<z.infer<typeof BetaPageState>> {
  const account = await getAccount(db, claims.tenant, claims.account)
  const none = { mode: null, qr_data_url: null, qr_expires_at: null, page_expires_at: pageExpiresAt }
  if (account?.channel !== 'beta') return { status: 'not_initialized', reason: 'removed', message: 'This number is no longer on the account.', ...none }
  const { record } = await sessionStatus(env, claims.tenant, claims.account)
  if (!record) return { ...statusOf(record), ...none }
  // A lapsed QR is not shown: scanning it would fail. The relay replaces it before that in the normal case.
  const qr = record.session === 'qr_pending' && record.qr !== null && (record.qrExpiresAt === null || record.qrExpiresAt > now) ? record.qr : null
  return {
    ...statusOf(record),
    mode: record.linkMethod === 'qr' ? 'qr' : 'code',
    qr_data_url: qr ? await qrDataUrl(qr) : null,
    qr_expires_at: qr ? record.qrExpiresAt : null,
    page_expires_at: pageExpiresAt,
  }
}

/** Mounted at the root (contract: public routes name their full paths). */
export const betaPageRoutes = resourceApp().basePath(BETA_PAGE_BASE)

// Every answer of the page, errors included, is uncacheable and sends no referrer.
const pageHeaders = createMiddleware<AppEnv>(async function pageHeaders(c, next) {
  await next()
  for (const [name, value] of Object.entries(PAGE_HEADERS)) c.res.headers.set(name, value)
})
betaPageRoutes.use('/connect/page', pageHeaders)
betaPageRoutes.use('/connect/page/*', pageHeaders)

betaPageRoutes.openapi(pageRoute, async (c) => {
  const { token } = c.req.valid('query')
  let page: PageAccess
  try {
    page = await openPage(c.env, token)
  } catch (err) {
    if (!(err instanceof ApiError) || (err.status !== 403 && err.status !== 410)) throw err
    return c.html(betaPageError(err.status === 410 ? 'Link expired' : 'Link not valid', err.message), err.status)
  }
  const nonce = randomBase62(22)
  const q = `?token=${encodeURIComponent(token ?? '')}`
  const path = BETA_PAGE.path
  return c.html(
    betaPageHtml({
      phoneMasked: maskPhone(page.claims.account),
      statePath: `${path}/state${q}`,
      codePath: `${path}/code${q}`,
      passwordPath: `${path}/password${q}`,
      pageExpiresAt: page.expiresAt,
      nonce,
    }),
    200,
    { 'Content-Security-Policy': pageCsp(nonce) }
  )
})

betaPageRoutes.openapi(stateRoute, async (c) => {
  const page = await openPage(c.env, c.req.valid('query').token)
  return c.json(await pageState(c.env, page.db, page.claims, page.expiresAt, Date.now()), 200)
})

betaPageRoutes.openapi(codeRoute, async (c) => {
  const { claims, db } = await openPage(c.env, c.req.valid('query').token)
  return c.json(await verifyStep(c, db, claims.tenant, claims.account, { kind: 'code', code: c.req.valid('json').code }), 200)
})

betaPageRoutes.openapi(passwordRoute, async (c) => {
  const { claims, db } = await openPage(c.env, c.req.valid('query').token)
  return c.json(await verifyStep(c, db, claims.tenant, claims.account, { kind: 'password', password: c.req.valid('json').password }), 200)
})
