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
import { getAccount } from '../../db/accounts'
import { statusErrors } from '../../lib/openapi-responses'
import { resourceApp } from '../../validate'
import { BETA_PAGE } from './connect-token'
import { PAGE_OPERATIONS } from './connect-page'
import { statusOf, tokenOf } from './status'
import { findRelayAccount, removeRelayAccount } from '../relay-run/account'
import { sessionStatus } from '../relay-run/session'
import { BETA, problemError, startBetaLogin, VERIFY_ERRORS, verifyStep } from './connect'

export const betaRoutes = resourceApp()
// The hosted page is served by the channel's public routes (its token, not an API key, lets it in) and described
// here, under the channel's path, so the OpenAPI document lists it with the rest of beta.
for (const op of PAGE_OPERATIONS) betaRoutes.openAPIRegistry.registerPath(op)

const TAG = ['beta channel']

betaRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/connect',
    tags: TAG,
    operationId: 'connect_beta',
    summary: 'Log in a beta account',
    description: [
      'Starts logging in the user’s own beta account: mode code sends a one-time code to their beta app (then call submit_beta_code), mode qr returns a QR login link; the returned connect_url lets the user finish it themselves.',
      [
        'The account is listed as `connecting` at once (no warm-up ramp) and counts',
        'against the plan’s account cap. Mode `code`: a one-time code goes to the user’s beta app (`code_required`); verify it with',
        'POST /channels/beta/connect/{phoneNumber}/code, then the two-step password if asked. Mode `qr`: the answer carries `qr_url`',
        '(`tg://login?token=…`) and `login_token`; the user scans it in the app under Devices, and the token is replaced about every 30 s',
        '(poll the status). `initializing` means the session is still starting (no relay yet). A banned number answers 403, a number',
        'without a beta account 404, too many attempts 429. `connect_url` (valid 30 minutes, `connect_url_expires_at`) is a hosted page',
        'where the user finishes the login alone, with no login of its own: it asks for the code and any two-step password, or shows',
        'the QR and replaces it before each token lapses (GET /channels/beta/connect/page).',
      ].join(' '),
    ].join('\n\n'),
    request: { headers: IdempotencyKeyHeader, body: { required: true, content: { 'application/json': { schema: BetaConnectBody } } } },
    responses: {
      200: { description: 'Login started', content: { 'application/json': { schema: BetaConnectResult } } },
      ...statusErrors([400, 401, 403, 404, 409, 422, 429]),
    },
  }),
  async (c) => {
    const body = c.req.valid('json')
    const tenant = c.get('tenant')
    const db = c.var.db
    const phone = body.phone_number
    const existing = await getAccount(db, tenant.id, phone)
    const base = { success: true as const, phone_number: phone, connect_url: null, connect_url_expires_at: null }
    if (existing?.channel === 'beta' && existing.status === 'connected' && !body.force_new) {
      const { record } = await sessionStatus(c.env, tenant.id, phone)
      return c.json({ ...base, status: 'connected' as const, session_id: record?.sid ?? null }, 200)
    }
    const record = await startBetaLogin(c.env, db, tenant, phone, body.mode, body.force_new)
    const problem = record && (record.session === 'disconnected' || record.session === 'restricted') ? problemError(record.problem, record.message) : null
    if (problem) throw problem
    const session_id = record?.sid ?? null
    if (record?.session === 'connected') return c.json({ ...base, status: 'connected' as const, session_id }, 200)
    // The user can finish the login on the hosted page: enter the code and password, or scan the refreshing QR.
    const page = await BETA_PAGE.link(c.env, c.req.url, { tenant: tenant.id, account: phone }, Date.now())
    const pending = { ...base, session_id, connect_url: page.url, connect_url_expires_at: page.expiresAt }
    if (record?.session === 'qr_pending' && record.qr) {
      return c.json({ ...pending, status: 'qr_required' as const, login_token: tokenOf(record.qr), qr_url: record.qr }, 200)
    }
    if (record?.session === 'code_required') return c.json({ ...pending, status: 'code_required' as const }, 200)
    return c.json({ ...pending, status: 'initializing' as const }, 200)
  }
)

betaRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/connect/{phoneNumber}/code',
    tags: TAG,
    operationId: 'submit_beta_code',
    summary: 'Submit the beta login code',
    description: [
      'Submits the one-time code the user received in their beta app; answers connected, or password_required when the account has a two-step password (then call submit_beta_password).',
      'Answers `connected`, or `password_required` when the account has a two-step password (then POST …/password). A wrong code keeps the login open (400 code_invalid); an expired one sends a fresh code (410 code_expired). The code is passed to the relay once and never stored, logged or echoed.',
    ].join('\n\n'),
    request: { params: BetaPhoneParam, body: { required: true, content: { 'application/json': { schema: BetaCodeBody } } } },
    responses: { 200: { description: 'Verified', content: { 'application/json': { schema: BetaVerifyResult } } }, ...VERIFY_ERRORS },
  }),
  async (c) => {
    const { phoneNumber: phone } = c.req.valid('param')
    return c.json(await verifyStep(c, c.var.db, c.get('tenant').id, phone, { kind: 'code', code: c.req.valid('json').code }), 200)
  }
)

betaRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/connect/{phoneNumber}/password',
    tags: TAG,
    operationId: 'submit_beta_password',
    summary: 'Submit the beta two-step password',
    description: [
      'Submits the user’s two-step verification password to finish a beta login; ask the user for it and never repeat or store it.',
      'After `password_required`. The relay proves it to beta by SRP; the password itself never reaches beta, and it is never stored, logged or echoed here. A wrong password keeps the login open (422 password_invalid).',
    ].join('\n\n'),
    request: { params: BetaPhoneParam, body: { required: true, content: { 'application/json': { schema: BetaPasswordBody } } } },
    responses: { 200: { description: 'Verified', content: { 'application/json': { schema: BetaVerifyResult } } }, ...VERIFY_ERRORS },
  }),
  async (c) => {
    const { phoneNumber: phone } = c.req.valid('param')
    return c.json(await verifyStep(c, c.var.db, c.get('tenant').id, phone, { kind: 'password', password: c.req.valid('json').password }), 200)
  }
)

betaRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/connect/{phoneNumber}/status',
    tags: TAG,
    operationId: 'get_beta_status',
    summary: 'Get the beta connection status',
    description: [
      'Reports a beta login or connection: connected (reason flood_wait while sends are paused), code_required, password_required, initializing, disconnected, not_initialized or error; on disconnected or error with a reason (logged_out, blocked_by_beta, stranger_flag, …) tell the user instead of retrying.',
      '`connected` is success (with `reason` flood_wait while beta asks the account to slow down and sends are paused); `code_required` and `password_required` wait for the user; `initializing` is starting (or waiting for a QR scan); `disconnected` (logged_out, link_expired, unknown_number, wrong_number, …) and `error` (blocked_by_beta, stranger_flag) need the user. `not_initialized`: no session exists (a number never connected here, or removed). `live` is true when the relay running the session answered just now.',
    ].join('\n\n'),
    request: { params: BetaPhoneParam },
    responses: { 200: { description: 'The status', content: { 'application/json': { schema: BetaStatusResult } } }, ...statusErrors([400, 401]) },
  }),
  async (c) => {
    const { phoneNumber: phone } = c.req.valid('param')
    const tenant = c.get('tenant')
    // No session exists for a number that is not on the account (never connected, or removed): spec part 3's
    // `not_initialized`, answered without waking an AccountDO for it.
    if (!(await findRelayAccount(c.var.db, BETA, tenant.id, phone))) {
      return c.json({ success: true as const, phone_number: phone, ...statusOf(undefined), telegram_user_id: null, live: false }, 200)
    }
    const { record, live } = await sessionStatus(c.env, tenant.id, phone, true)
    const s = statusOf(record)
    return c.json({ success: true as const, phone_number: phone, ...s, telegram_user_id: record?.upstreamUserId ?? null, live }, 200)
  }
)

betaRoutes.openapi(
  createRoute({
    method: 'delete',
    path: '/{phoneNumber}',
    tags: TAG,
    operationId: 'disconnect_beta',
    summary: 'Log out a beta account',
    description: [
      'Logs the beta account out of the service and removes it, so sending and receiving on it stop; ask the user first. Idempotent.',
      'Logs the session out upstream (through the relay, when one is reachable) and removes the account: always `removed`, also for a number that is not on the account (idempotent) and when no relay is reachable. Messages still queued fail; history stays.',
    ].join('\n\n'),
    request: { params: BetaPhoneParam },
    responses: { 200: { description: 'Removed', content: { 'application/json': { schema: BetaRemoved } } }, ...statusErrors([400, 401]) },
  }),
  async (c) => {
    const { phoneNumber: phone } = c.req.valid('param')
    // Always `removed`, also for a number that is not on the account (idempotent).
    await removeRelayAccount(c.env, c.var.db, BETA, c.get('tenant').id, phone)
    return c.json({ success: true as const, phone_number: phone, status: 'removed' as const }, 200)
  }
)
