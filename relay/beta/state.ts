/**
 * What went wrong with a beta session, in words: the problem codes with one human sentence each, and the classifier
 * that turns a GramJS error (an RPCError's `errorMessage`, a FloodWaitError's `seconds`) into what to do next.
 * Sources: upstreams.md §2.8 (GramJS errors/RPCErrorList.js, core.telegram.org error tables).
 */
import { errors } from 'telegram'
import type { BetaProblem, LoginError } from '../connector'

export const PROBLEM_MESSAGES: Record<BetaProblem, string> = {
  logged_out: 'The session was logged out or revoked from the app (Settings, Devices); connect the number again.',
  link_expired: 'The login was not finished in time; start the connection again.',
  unresponsive: 'beta stopped answering and reconnecting keeps failing; the relay keeps retrying in the background.',
  blocked_by_beta: 'beta has banned or deactivated this number, so sending is stopped.',
  stranger_flag:
    "beta limits this account for messaging people who do not know it (PEER_FLOOD): it may still write to mutual contacts, other messages fail. The first message that goes through lifts this; the app's spam support says how long the limit lasts.",
  flood_wait: 'beta asked this account to slow down; sends are paused and go out in order when the pause ends.',
  unknown_number: 'This number has no beta account (or is not a valid number there).',
  too_many_attempts: 'Too many login attempts for this number; beta refuses new ones for a while.',
  wrong_number: 'The QR was confirmed in the app of another beta account than the number being connected; that login was ended.',
}

/** wrong_number, naming the number the login was for. */
export function wrongNumberMessage(phone: string): string {
  return `The QR was confirmed in the app of another beta account, not the one of ${phone}; that login was logged out again and nothing was kept. Scan the QR with the app signed in as ${phone}.`
}

/** Login errors with one sentence each; the edge answers them with its own stable codes. */
export const LOGIN_MESSAGES: Record<LoginError, string> = {
  code_invalid: 'The code is not the one beta sent; check it and try again.',
  code_expired: 'The code expired; a new one was sent to the app, enter that one.',
  password_invalid: 'The two-step password is wrong; try again.',
  too_many_attempts: 'Too many attempts; wait before trying again.',
  unknown_number: 'This number has no beta account.',
  number_banned: 'beta has banned this number.',
  no_login_pending: 'No login is waiting for this step; start the connection again.',
  login_failed: 'The login failed upstream; start the connection again.',
}

/**
 * AUTH_KEY_DUPLICATED (406): beta saw the session's key used from two places at once and invalidated it for good; the
 * same key answers it again on every later connection, so it is a logout, not a takeover to wait out.
 */
export const DUPLICATED_KEY_MESSAGE =
  'beta ended this session because its key was used from two places at once (AUTH_KEY_DUPLICATED); the session is gone, connect the number again.'

/** The 401 family: the authorization is gone. USER_DEACTIVATED_BAN is also a ban. */
const LOGGED_OUT = new Set(['AUTH_KEY_UNREGISTERED', 'SESSION_REVOKED', 'SESSION_EXPIRED', 'AUTH_KEY_INVALID', 'USER_DEACTIVATED'])
const BANNED = new Set(['USER_DEACTIVATED_BAN', 'PHONE_NUMBER_BANNED'])

export type ErrorVerdict =
  /** Wait `seconds`, then the same call may go again. */
  | { kind: 'flood'; seconds: number }
  /** PEER_FLOOD: the account is spam-limited; it may still write to mutual contacts. */
  | { kind: 'stranger' }
  /** The session is gone (revoked, expired, or its key duplicated); `message` says which, for the user. */
  | { kind: 'logged_out'; message: string }
  | { kind: 'banned' }
  /** The upstream refused this one call for good (bad peer, blocked by the user, too long): fail the message. */
  | { kind: 'refused'; message: string; code: number | null }
  /** Network, timeouts, 5xx: try again later. */
  | { kind: 'transient'; message: string }

export function rpcMessage(err: unknown): string | null {
  return err instanceof errors.RPCError ? err.errorMessage : null
}

export function classifyError(err: unknown): ErrorVerdict {
  if (err instanceof errors.FloodWaitError) return { kind: 'flood', seconds: Math.max(1, err.seconds) }
  if (!(err instanceof errors.RPCError)) return { kind: 'transient', message: err instanceof Error ? err.message : String(err) }
  const msg = err.errorMessage
  if (msg === 'PEER_FLOOD') return { kind: 'stranger' }
  if (msg === 'AUTH_KEY_DUPLICATED') return { kind: 'logged_out', message: DUPLICATED_KEY_MESSAGE }
  if (BANNED.has(msg)) return { kind: 'banned' }
  if (LOGGED_OUT.has(msg)) return { kind: 'logged_out', message: PROBLEM_MESSAGES.logged_out }
  if (err.code !== undefined && err.code >= 500) return { kind: 'transient', message: msg }
  return { kind: 'refused', message: msg, code: err.code ?? null }
}

/** A login call's failure as the user should hear it, or null when it is not a login error (then: login_failed). */
export function loginErrorOf(err: unknown): { error: LoginError; retryAfterS: number | null } | null {
  if (err instanceof errors.FloodWaitError) return { error: 'too_many_attempts', retryAfterS: err.seconds }
  switch (rpcMessage(err)) {
    case 'PHONE_CODE_INVALID':
    case 'PHONE_CODE_EMPTY':
      return { error: 'code_invalid', retryAfterS: null }
    case 'PHONE_CODE_EXPIRED':
      return { error: 'code_expired', retryAfterS: null }
    case 'PASSWORD_HASH_INVALID':
      return { error: 'password_invalid', retryAfterS: null }
    case 'PHONE_NUMBER_INVALID':
    case 'PHONE_NUMBER_UNOCCUPIED':
      return { error: 'unknown_number', retryAfterS: null }
    case 'PHONE_NUMBER_BANNED':
    case 'USER_DEACTIVATED_BAN':
      return { error: 'number_banned', retryAfterS: null }
    case 'PHONE_NUMBER_FLOOD':
    case 'PHONE_PASSWORD_FLOOD':
      return { error: 'too_many_attempts', retryAfterS: null }
    default:
      return null
  }
}
