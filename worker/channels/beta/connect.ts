/**
 * Logging a beta account in (spec 4.4): the session starts like any relay-run channel's (channels/relay-run/: the
 * account listed as `connecting` at once, its AccountDO waiting briefly for the first step, code sent or QR token);
 * the code and the password go to the relay holding the session in one frame each and are never kept here.
 */
import type { Context } from 'hono'
import type { LoginOutcome, LoginStep } from '../../../schema/frames'
import type { SessionRecord } from '../../account/session/state'
import type { Db } from '../../db/client'
import type { Tenant } from '../../db/tenants'
import type { AppEnv } from '../../env'
import { ApiError } from '../../errors'
import { relayHub } from '../../lib/objects'
import { statusErrors } from '../../lib/openapi-responses'
import { loginStepLimit } from '../../lib/rate-limit'
import { relayAccount, type RelayRun } from '../relay-run/account'
import { sessionStatus, startSession } from '../relay-run/session'

/** How long a verify call waits for the relay's verdict (a password step runs SRP on the relay). */
export const LOGIN_STEP_TIMEOUT_MS = 20_000

/** beta as the relay-run helpers name it (channels/relay-run/). */
export const BETA: RelayRun = { id: 'beta', title: 'beta' }

/** Starts (or restarts) the login and answers the session's record once the first step is known or the wait ran out. */
export async function startBetaLogin(
  env: Env,
  db: Db,
  tenant: Tenant,
  phone: string,
  mode: 'code' | 'qr',
  forceNew: boolean
): Promise<SessionRecord | undefined> {
  await startSession(env, db, BETA, tenant, phone, {
    linkMethod: mode,
    forceNew,
    // The address book always comes in: it decides who may be messaged by phone (§4.2, beta_requires_existing_contact).
    options: { importContacts: true, pauseAiForImportedContacts: false, importExistingChats: false, markImportedContactsAsPrivate: false },
  })
  return (await sessionStatus(env, tenant.id, phone)).record ?? undefined
}

/**
 * Login refusals as HTTP answers. The channel-connection error body carries the HTTP status as `error_code` (spec
 * part 7), so each refusal has its own status, and the message starts with the stable code.
 */
const REFUSALS: Record<Extract<LoginOutcome, { status: 'refused' }>['error'], 400 | 403 | 404 | 409 | 410 | 422 | 429 | 502> = {
  code_invalid: 400,
  password_invalid: 422,
  code_expired: 410,
  too_many_attempts: 429,
  unknown_number: 404,
  number_banned: 403,
  no_login_pending: 409,
  login_failed: 502,
}

/** What each error status of a verify step means (OpenAPI: the REST verify routes and the hosted page's submissions). */
export const VERIFY_ERROR_TEXT: Record<number, string> = {
  400: 'code_invalid, or an invalid request',
  403: 'number_banned',
  404: 'No beta account for this number on this key, or unknown_number (no beta account upstream)',
  409: 'no_login_pending: no login waits for this step',
  410: 'code_expired: a new code was sent; enter that one',
  422: 'password_invalid',
  429: 'too_many_attempts (Retry-After when beta gave a wait), or rate_limited: more than 10 codes or passwords a minute for the number',
  502: 'login_failed upstream',
  503: 'relay_unavailable: no relay is running the login',
}
export const VERIFY_ERRORS = statusErrors([400, 401, 403, 404, 409, 410, 422, 429, 502, 503], VERIFY_ERROR_TEXT)

export function refusalError(outcome: Extract<LoginOutcome, { status: 'refused' }>): ApiError {
  return new ApiError(REFUSALS[outcome.error], outcome.error, `${outcome.error}: ${outcome.message}`, outcome.retryAfterS ?? undefined)
}

/** Problems that end a login before any step (reported by the relay right after connect). */
export function problemError(problem: string | null, message: string | null): ApiError | null {
  switch (problem) {
    case 'blocked_by_beta':
      return new ApiError(403, 'number_banned', `number_banned: ${message ?? 'beta has banned this number.'}`)
    case 'unknown_number':
      return new ApiError(404, 'unknown_number', `unknown_number: ${message ?? 'This number has no beta account.'}`)
    case 'too_many_attempts':
      return new ApiError(429, 'too_many_attempts', `too_many_attempts: ${message ?? 'Too many login attempts; wait before trying again.'}`)
    default:
      return null
  }
}

/** Hands one step to the relay holding the session; the step is not logged or stored on the way. */
export async function submitStep(env: Env, tenantId: string, phone: string, step: LoginStep): Promise<LoginOutcome> {
  const { record } = await sessionStatus(env, tenantId, phone)
  if (!record) throw new ApiError(409, 'no_login_pending', 'no_login_pending: No login is in progress for this number; call connect first.')
  const outcome = await relayHub(env).loginStep(record.sid, step, LOGIN_STEP_TIMEOUT_MS)
  if (!outcome)
    throw new ApiError(503, 'relay_unavailable', 'relay_unavailable: No relay is running this login right now; try again in a moment or connect again.')
  if (outcome.status === 'refused') throw refusalError(outcome)
  return outcome
}

/** The answer of a verified step (`BetaVerifyResult`); a code or password is never part of it. */
export function verifyAnswer(phone: string, outcome: LoginOutcome) {
  if (outcome.status === 'connected')
    return { success: true as const, phone_number: phone, status: 'connected' as const, telegram_user_id: outcome.userId, username: outcome.username }
  if (outcome.status === 'password_required')
    return {
      success: true as const,
      phone_number: phone,
      status: 'password_required' as const,
      telegram_user_id: null,
      username: null,
      password_hint: outcome.hint,
    }
  throw new ApiError(502, 'login_failed', 'login_failed: unexpected answer from the relay')
}

/**
 * One login step for a number of the tenant, as the REST verify routes and the hosted page both submit it: the
 * account must be the tenant's beta account (404), each submission counts against RL_LOGIN_STEP (429), and the
 * relay's verdict comes back as the verify answer or the refusal's own status. Same path, same codes, either way in.
 */
export async function verifyStep(c: Context<AppEnv>, db: Db, tenantId: string, phone: string, step: LoginStep) {
  await relayAccount(db, BETA, tenantId, phone)
  await loginStepLimit(c, tenantId, phone)
  return verifyAnswer(phone, await submitStep(c.env, tenantId, phone, step))
}
