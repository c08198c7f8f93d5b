/**
 * What went wrong with an alpha session, in words: the problem codes with one human sentence each, the classifier
 * that turns a Baileys close (`lastDisconnect.error`) into what to do next, and the reconnect backoff.
 */
import type { AlphaProblem } from '../connector'

/** One sentence per problem, shown to the user as the status reason; clients switch on the code, never on this. */
export const PROBLEM_MESSAGES: Record<AlphaProblem, string> = {
  logged_out: 'The linked device was removed or logged out from the phone; link the number again to reconnect.',
  blocked_by_alpha: 'alpha has restricted or banned this number, so sending is stopped until the restriction ends.',
  replaced: 'Another client took over this session; the relay stopped instead of fighting it. Reconnect to take it back.',
  passkey_required:
    'The phone requires a passkey to link a new device, and passkey linking is off for this account (tenant setting alpha_passkey_linking); linking was cancelled. See docs/channels/alpha.md, “When the phone asks for a passkey”.',
  passkey_expired:
    'The owner did not give their passkey, or confirm the code, in time; linking was cancelled. Start the connection again when the owner is ready.',
  passkey_rejected:
    'alpha refused a step of the passkey ceremony (the passkey may belong to another account); linking was cancelled and is not retried. Start the connection again to try once more.',
  passkey_timeout:
    'alpha or the phone did not answer a step of the passkey ceremony in time, or the connection dropped during it; linking was cancelled. Start the connection again.',
  link_expired: 'The QR code or pairing code expired before the phone confirmed the link; start the connection again.',
  session_unreadable: 'The stored session was written with another RELAY_SESSION_KEY; link again with force_new.',
  unresponsive: 'alpha stopped answering and reconnecting keeps failing; the relay keeps retrying in the background.',
  client_outdated:
    'alpha refuses the web client version of this relay (error 405, repeated); the relay operator must upgrade @whiskeysockets/baileys. Nothing is retried until then.',
}

/** The messages of the closes that tell the user to link again, each as alpha means it. */
export const CLOSE_MESSAGES = {
  forbidden:
    'alpha refused this session (403): the number may be banned or the linked device was refused. Check the number on the phone; if it works there, link it again.',
  multideviceMismatch: 'alpha says this linked device no longer fits the account (411, multi-device mismatch); link the number again.',
  badSession: 'The stored session keeps failing right after it connects (alpha error 500, bad session); link the number again.',
} as const

/** Baileys' `DisconnectReason` values and the `<failure reason>` codes it passes through unnamed (whatsmeow's list). */
export const CLOSE_CODES = {
  loggedOut: 401,
  tempBanned: 402,
  forbidden: 403,
  /** `<failure reason="405">`: the web client version is refused (outdated); Baileys passes it through unnamed. */
  clientOutdated: 405,
  banned: 406,
  timedOut: 408,
  multideviceMismatch: 411,
  connectionClosed: 428,
  connectionReplaced: 440,
  badSession: 500,
  unavailableService: 503,
  restartRequired: 515,
} as const

/** The send error code for a restricted account (no tctoken for a new chat); retrying makes the restriction worse. */
export const SEND_ERROR_RESTRICTED = 463

export type CloseVerdict =
  /** The server asked for a new stream (always right after pairing): open a new socket now. */
  | { kind: 'restart' }
  /** Transient (network, keep-alive lost, server busy, unknown): reconnect with backoff. */
  | { kind: 'retry' }
  /** Terminal: the companion was removed; the session is wiped. */
  | { kind: 'logged_out' }
  /** Terminal until lifted: banned or refused (403, 406) or temporarily banned (402, with its end when given). */
  | { kind: 'restricted'; until: number | null }
  /** Another client logged in with the same credentials; reconnecting would make the two fight. */
  | { kind: 'replaced' }

export type CloseInfo = { statusCode: number | null; message: string; data: Record<string, unknown> | null }

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null
}

/** Reads the Boom fields Baileys puts on `lastDisconnect.error` without trusting their shape. */
export function closeInfo(error: unknown): CloseInfo {
  if (!isRecord(error)) return { statusCode: null, message: '', data: null }
  const output = error['output']
  const code = isRecord(output) ? output['statusCode'] : undefined
  const message = typeof error['message'] === 'string' ? error['message'] : ''
  const data = isRecord(error['data']) ? error['data'] : null
  return { statusCode: typeof code === 'number' && Number.isInteger(code) ? code : null, message, data }
}

/**
 * A WebSocket-level failure (Baileys: "WebSocket Error (…)", status taken from the HTTP handshake or the errno) says
 * nothing about the account; only `<failure>` and `<stream:error>` stanzas from alpha itself may end a session.
 */
function isTransportError(info: CloseInfo): boolean {
  return info.message.startsWith('WebSocket Error')
}

/** Consecutive 405 closes (with a refreshed version in between) before the relay reports `client_outdated`. */
export const CLIENT_OUTDATED_CLOSES_MAX = 3
/** Consecutive 500 closes, each within BAD_SESSION_WINDOW_MS of connecting, before the session is given up. */
export const BAD_SESSION_CLOSES_MAX = 3
export const BAD_SESSION_WINDOW_MS = 30_000

/** A 402 `<failure>` carries `expire` (seconds) next to the ban reason code (whatsmeow: TempBanReason). */
function tempBanEnd(info: CloseInfo, nowMs: number): number | null {
  const expire = Number(info.data?.['expire'])
  return Number.isFinite(expire) && expire > 0 ? nowMs + expire * 1000 : null
}

export function classifyClose(error: unknown, nowMs: number): CloseVerdict {
  const info = closeInfo(error)
  if (info.statusCode === CLOSE_CODES.restartRequired) return { kind: 'restart' }
  if (info.statusCode === null || isTransportError(info)) return { kind: 'retry' }
  switch (info.statusCode) {
    case CLOSE_CODES.loggedOut:
      return { kind: 'logged_out' }
    case CLOSE_CODES.tempBanned:
      return { kind: 'restricted', until: tempBanEnd(info, nowMs) }

    case CLOSE_CODES.forbidden:
    case CLOSE_CODES.banned:
      return { kind: 'restricted', until: null }
    case CLOSE_CODES.connectionReplaced:
      return { kind: 'replaced' }
    default:
      return { kind: 'retry' }
  }
}

/**
 * Closes that `classifyClose` reads as a retry but that have a rule of their own, as Baileys means them:
 * - `multidevice_mismatch` (411, `downgrade_webclient`): terminal; the device can only be linked again.
 * - `client_outdated` (405 `<failure>`): the web client version was refused; fetch the current one and retry, and
 *   report it as terminal once it repeats (CLIENT_OUTDATED_CLOSES_MAX).
 * - `bad_session` (500): retried, but a session that keeps failing right after it connects stops (BAD_SESSION_*).
 */
export type CloseRule = 'multidevice_mismatch' | 'client_outdated' | 'bad_session'

export function closeRule(error: unknown): CloseRule | null {
  const info = closeInfo(error)
  if (info.statusCode === null || isTransportError(info)) return null
  switch (info.statusCode) {
    case CLOSE_CODES.multideviceMismatch:
      return 'multidevice_mismatch'
    case CLOSE_CODES.clientOutdated:
      return 'client_outdated'
    case CLOSE_CODES.badSession:
      return 'bad_session'
    default:
      return null
  }
}

/** Baileys ends a linking socket with this when the server's QR refs (and with them the pairing window) run out. */
export function isLinkWindowEnd(error: unknown): boolean {
  const info = closeInfo(error)
  return info.statusCode === CLOSE_CODES.timedOut && info.message.includes('QR refs')
}

export const MIN_RECONNECT_MS = 1_000
export const MAX_RECONNECT_MS = 120_000
export const RECONNECT_GROWTH = 2
/** Each delay is moved by up to ±this fraction so many relays restarting together do not reconnect in lockstep. */
export const RECONNECT_JITTER_RATIO = 0.25

/** Delay before reconnect attempt `attempt` (1-based): capped exponential growth with jitter, never below the minimum. */
export function reconnectDelayMs(attempt: number, random: () => number): number {
  const base = Math.min(MAX_RECONNECT_MS, MIN_RECONNECT_MS * RECONNECT_GROWTH ** Math.max(0, attempt - 1))
  const jitter = (random() * 2 - 1) * RECONNECT_JITTER_RATIO * base
  return Math.round(Math.min(MAX_RECONNECT_MS, Math.max(MIN_RECONNECT_MS, base + jitter)))
}
