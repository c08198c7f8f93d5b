/**
 * Logging a user account in, as explicit steps the edge drives (upstreams.md §2.1, §2.2): a code sent to the user's
 * app (`auth.SendCode`, `auth.SignIn`), a two-step password checked by SRP (`account.GetPassword`, the library's own
 * `computeCheck`, `auth.CheckPassword`), or a QR login token re-exported before it expires (`auth.ExportLoginToken`,
 * `UpdateLoginToken`, `auth.LoginTokenMigrateTo` → switch DC → `auth.ImportLoginToken`). Codes and passwords are
 * used once and never kept, logged or echoed. A QR can be accepted by any logged-in app, so a QR login is kept only
 * when the account it logged in is the number asked for (else `wrong_number`: the connector logs it out and wipes).
 */
import type { Logger } from 'pino'
import { Api } from 'telegram'
import { computeCheck } from 'telegram/Password'
import type { BetaProblem, LoginError, LoginOutcome, LoginStep, SessionState } from '../connector'
import { qrLink, upstreamPhoneToE164 } from './ids'
import type { BetaClient, BetaCredentials } from './socket'
import { LOGIN_MESSAGES, loginErrorOf, rpcMessage, wrongNumberMessage } from './state'

/** The hosted connect link lives about 30 minutes (§8); a login not finished by then is given up. */
export const LOGIN_WINDOW_MS = 30 * 60_000
/** Wrong codes (or passwords) accepted before the login is ended; beta itself starts flood-waiting soon after. */
export const MAX_CODE_ATTEMPTS = 5
export const MAX_PASSWORD_ATTEMPTS = 5
/** A login token is re-exported this long before it expires, so the page never shows a dead QR. */
export const QR_REFRESH_LEAD_MS = 2_000
/** When beta gives no usable expiry: GramJS's own QR_CODE_TIMEOUT. */
export const QR_DEFAULT_TTL_MS = 30_000

export type LoginDeps = {
  client: BetaClient
  creds: BetaCredentials
  phone: string
  method: 'code' | 'qr'
  now(): number
  emit(state: SessionState): void
  log: Logger
  /** The account is authorized on this client; the connector saves the session and goes live. */
  onAuthorized(user: Api.User): Promise<void>
  /**
   * The login cannot continue (unknown number, banned, too many attempts, window over, another account's QR
   * confirmation); `message` when the problem's usual sentence is not enough.
   */
  onFailed(problem: BetaProblem, message?: string): void
}

export type LoginFlow = {
  begin(): Promise<void>
  submit(step: LoginStep): Promise<LoginOutcome>
  /** `UpdateLoginToken`: the QR was accepted on another device; exporting the token again finishes the login. */
  onLoginToken(): void
  stop(): void
}

type Phase = { kind: 'starting' } | { kind: 'code'; hash: string } | { kind: 'qr' } | { kind: 'password'; hint: string | null } | { kind: 'done' }

function refused(error: LoginError, retryAfterS: number | null = null): LoginOutcome {
  return { status: 'refused', error, message: LOGIN_MESSAGES[error], retryAfterS }
}

/** Login errors that end the login (the number itself cannot log in now), as the session's problem. */
function terminalProblem(error: LoginError): BetaProblem | null {
  switch (error) {
    case 'unknown_number':
      return 'unknown_number'
    case 'number_banned':
      return 'blocked_by_beta'
    case 'too_many_attempts':
      return 'too_many_attempts'
    default:
      return null
  }
}

export function startLogin(deps: LoginDeps): LoginFlow {
  let phase: Phase = { kind: 'starting' }
  let codeAttempts = 0
  let passwordAttempts = 0
  let windowTimer: ReturnType<typeof setTimeout> | null = null
  let qrTimer: ReturnType<typeof setTimeout> | null = null
  const deadline = deps.now() + LOGIN_WINDOW_MS
  // One step at a time: a code submit, a token refresh and an UpdateLoginToken never interleave on the client.
  let serial: Promise<unknown> = Promise.resolve()
  function inTurn<T>(work: () => Promise<T>): Promise<T> {
    const next = serial.then(work, work)
    serial = next.catch(() => undefined)
    return next
  }

  function clearTimers() {
    if (windowTimer) clearTimeout(windowTimer)
    if (qrTimer) clearTimeout(qrTimer)
    windowTimer = qrTimer = null
  }

  function fail(problem: BetaProblem, message?: string) {
    if (phase.kind === 'done') return
    phase = { kind: 'done' }
    clearTimers()
    deps.onFailed(problem, message)
  }

  async function finish(authorization: unknown): Promise<LoginOutcome> {
    const user = authorization instanceof Api.auth.Authorization && authorization.user instanceof Api.User ? authorization.user : null
    if (!user) {
      deps.log.warn('beta login: the authorization carried no user')
      fail('unresponsive')
      return refused('login_failed')
    }
    if (deps.method === 'qr' && upstreamPhoneToE164(user.phone) !== upstreamPhoneToE164(deps.phone)) {
      // Never connect the wrong number: the connector logs this authorization out and keeps nothing of it.
      deps.log.warn('beta login: the QR was accepted by another account than the number asked for')
      fail('wrong_number', wrongNumberMessage(deps.phone))
      return refused('login_failed')
    }
    phase = { kind: 'done' }
    clearTimers()
    await deps.onAuthorized(user)
    return { status: 'connected', userId: user.id.toString(), username: user.username ?? null }
  }

  async function sendCode(): Promise<void> {
    const sent = await deps.client.invoke(
      new Api.auth.SendCode({ phoneNumber: deps.phone, apiId: deps.creds.apiId, apiHash: deps.creds.apiHash, settings: new Api.CodeSettings({}) })
    )
    if (sent instanceof Api.auth.SentCodeSuccess) {
      await finish(sent.authorization)
      return
    }
    if (!(sent instanceof Api.auth.SentCode)) throw new Error('beta login: unexpected answer to auth.SendCode')
    phase = { kind: 'code', hash: sent.phoneCodeHash }
    deps.log.info({ via: sent.type.className }, 'beta login: code sent')
    deps.emit({ state: 'code_required', expiresAt: deadline })
  }

  async function toPassword(): Promise<LoginOutcome> {
    const pwd = await deps.client.invoke(new Api.account.GetPassword())
    const hint = pwd instanceof Api.account.Password ? (pwd.hint ?? null) : null
    phase = { kind: 'password', hint }
    if (qrTimer) clearTimeout(qrTimer)
    deps.emit({ state: 'password_required', hint, expiresAt: deadline })
    return { status: 'password_required', hint }
  }

  async function exportToken(): Promise<void> {
    if (phase.kind !== 'qr' && phase.kind !== 'starting') return
    let result: unknown
    try {
      result = await deps.client.invoke(new Api.auth.ExportLoginToken({ apiId: deps.creds.apiId, apiHash: deps.creds.apiHash, exceptIds: [] }))
      if (result instanceof Api.auth.LoginTokenMigrateTo) {
        // The account lives on another data center: move there and import the token (core.telegram.org/api/qr-login).
        deps.log.info({ dc: result.dcId }, 'beta login: QR accepted on another data center; switching')
        await deps.client.switchDC(result.dcId)
        result = await deps.client.invoke(new Api.auth.ImportLoginToken({ token: result.token }))
      }
    } catch (err) {
      if (rpcMessage(err) === 'SESSION_PASSWORD_NEEDED') {
        await toPassword()
        return
      }
      const problem = terminalProblem(loginErrorOf(err)?.error ?? 'login_failed')
      if (problem) return fail(problem)
      deps.log.warn({ err: rpcMessage(err) ?? (err instanceof Error ? err.message : String(err)) }, 'beta login: exporting the login token failed; retrying')
      phase = { kind: 'qr' }
      scheduleRefresh(deps.now() + QR_DEFAULT_TTL_MS / 3)
      return
    }
    if (result instanceof Api.auth.LoginTokenSuccess) {
      await finish(result.authorization)
      return
    }
    if (!(result instanceof Api.auth.LoginToken)) throw new Error('beta login: unexpected answer to auth.ExportLoginToken')
    phase = { kind: 'qr' }
    const expiresAt = result.expires > 0 ? result.expires * 1000 : deps.now() + QR_DEFAULT_TTL_MS
    deps.emit({ state: 'qr_pending', qr: qrLink(Buffer.from(result.token)), expiresAt })
    scheduleRefresh(expiresAt - QR_REFRESH_LEAD_MS)
  }

  function scheduleRefresh(at: number) {
    if (qrTimer) clearTimeout(qrTimer)
    if (at >= deadline) {
      qrTimer = setTimeout(() => fail('link_expired'), Math.max(0, deadline - deps.now()))
      return
    }
    qrTimer = setTimeout(() => void inTurn(exportToken).catch(onStepError), Math.max(0, at - deps.now()))
  }

  function onStepError(err: unknown) {
    deps.log.error({ err: err instanceof Error ? err.message : String(err) }, 'beta login step failed')
    fail('unresponsive')
  }

  async function submitCode(code: string): Promise<LoginOutcome> {
    if (phase.kind !== 'code') return refused('no_login_pending')
    try {
      const result = await deps.client.invoke(new Api.auth.SignIn({ phoneNumber: deps.phone, phoneCodeHash: phase.hash, phoneCode: code }))
      if (result instanceof Api.auth.AuthorizationSignUpRequired) {
        fail('unknown_number')
        return refused('unknown_number')
      }
      return await finish(result)
    } catch (err) {
      if (rpcMessage(err) === 'SESSION_PASSWORD_NEEDED') return toPassword()
      const known = loginErrorOf(err)
      if (!known) throw err
      if (known.error === 'code_invalid') {
        codeAttempts += 1
        if (codeAttempts >= MAX_CODE_ATTEMPTS) {
          fail('too_many_attempts')
          return refused('too_many_attempts')
        }
        return refused('code_invalid')
      }
      if (known.error === 'code_expired') {
        // The login goes on with a fresh code: the user enters the next one.
        await sendCode()
        return refused('code_expired')
      }
      if (known.error === 'too_many_attempts') return refused('too_many_attempts', known.retryAfterS)
      const problem = terminalProblem(known.error)
      if (problem) fail(problem)
      return refused(known.error)
    }
  }

  async function submitPassword(password: string): Promise<LoginOutcome> {
    if (phase.kind !== 'password') return refused('no_login_pending')
    try {
      // A fresh SRP challenge per attempt: srp_id is single use upstream.
      const pwd = await deps.client.invoke(new Api.account.GetPassword())
      if (!(pwd instanceof Api.account.Password)) throw new Error('beta login: unexpected answer to account.GetPassword')
      const check = await computeCheck(pwd, password)
      return await finish(await deps.client.invoke(new Api.auth.CheckPassword({ password: check })))
    } catch (err) {
      const known = loginErrorOf(err)
      if (!known) throw err
      if (known.error === 'password_invalid') {
        passwordAttempts += 1
        if (passwordAttempts >= MAX_PASSWORD_ATTEMPTS) {
          fail('too_many_attempts')
          return refused('too_many_attempts')
        }
        return refused('password_invalid')
      }
      if (known.error === 'too_many_attempts') return refused('too_many_attempts', known.retryAfterS)
      const problem = terminalProblem(known.error)
      if (problem) fail(problem)
      return refused(known.error)
    }
  }

  return {
    async begin() {
      windowTimer = setTimeout(() => fail('link_expired'), LOGIN_WINDOW_MS)
      try {
        await inTurn(() => (deps.method === 'qr' ? exportToken() : sendCode()))
      } catch (err) {
        const problem = terminalProblem(loginErrorOf(err)?.error ?? 'login_failed')
        if (problem) return fail(problem)
        throw err
      }
    },
    submit(step) {
      // alpha's passkey steps are no beta login step.
      if (phase.kind === 'done' || (step.kind !== 'code' && step.kind !== 'password')) return Promise.resolve(refused('no_login_pending'))
      return inTurn(() => (step.kind === 'code' ? submitCode(step.code) : submitPassword(step.password))).catch((err: unknown) => {
        deps.log.error({ step: step.kind, err: rpcMessage(err) ?? (err instanceof Error ? err.name : 'unknown') }, 'beta login step failed')
        return refused('login_failed')
      })
    },
    onLoginToken() {
      if (phase.kind === 'qr') void inTurn(exportToken).catch(onStepError)
    },
    stop() {
      phase = { kind: 'done' }
      clearTimers()
    },
  }
}
