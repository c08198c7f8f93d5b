/**
 * The driver interface every network implements (relay/alpha via Baileys, relay/beta via GramJS, relay/sim). The
 * relay core (link to the Worker, leases, session persistence, acks) only ever sees these types, never an upstream's.
 */
import type { Logger } from 'pino'

/** alpha: `qr` or `pairing_code`; beta: `code` (a login code sent to the user's app, maybe a password) or `qr`. */
export type LinkMethod = 'qr' | 'pairing_code' | 'code'

/** Why a session is not (or no longer) usable. Codes are stable; clients switch on them, never on the text. */
export type SessionProblem = AlphaProblem | BetaProblem

/** The problems an alpha session can have (beta's own are below). */
export type AlphaProblem =
  /** The user removed the linked device, or the upstream logged the session out (alpha 401). The session is wiped. */
  | 'logged_out'
  /** The upstream restricted or banned the number (alpha 402/403/406, send error 463). */
  | 'blocked_by_alpha'
  /** Another client took over the same session (alpha 440); reconnecting would make them fight. */
  | 'replaced'
  /** The phone demands a passkey to link a new device; QR or pairing code alone cannot finish. */
  | 'passkey_required'
  /** The link window ran out before the phone confirmed (QR refs exhausted, pairing code unused). */
  | 'link_expired'
  /** The upstream stopped answering (keep-alive lost) and reconnects are failing. */
  | 'unresponsive'

/** beta reuses logged_out, replaced, link_expired and unresponsive, and adds its own. */
export type BetaProblem =
  | 'logged_out'
  | 'replaced'
  | 'link_expired'
  | 'unresponsive'
  /** beta: the number or the account is banned or deactivated (PHONE_NUMBER_BANNED, USER_DEACTIVATED_BAN). */
  | 'blocked_by_beta'
  /** beta: the account was flagged for messaging strangers (PEER_FLOOD); sending stops. */
  | 'stranger_flag'
  /** beta: the upstream asked the account to slow down (FLOOD_WAIT); sends are paused until `until`. */
  | 'flood_wait'
  /** beta: the number has no account upstream, or is not a valid number there. */
  | 'unknown_number'
  /** beta: too many login attempts; the upstream refuses new ones for a while. */
  | 'too_many_attempts'

export type SessionState =
  | { state: 'qr_pending'; qr: string; expiresAt: number }
  | { state: 'pairing_code'; code: string; expiresAt: number }
  /** beta: a login code went to the user's app; `login({kind: 'code'})` continues. */
  | { state: 'code_required'; expiresAt: number | null }
  /** beta: the account has a two-step password; `login({kind: 'password'})` continues. */
  | { state: 'password_required'; hint: string | null; expiresAt: number | null }
  | { state: 'connecting' }
  | { state: 'connected'; identifier: string; upstreamUserId: string | null }
  /** beta: connected, but the upstream asked for a pause; sends wait until `until`, then go out in order. */
  | { state: 'slowed'; problem: 'flood_wait'; message: string; until: number }
  | { state: 'disconnected'; problem: SessionProblem; message: string }
  | { state: 'restricted'; problem: SessionProblem; message: string; until: number | null }

/**
 * A person on the network. `id` is stable (alpha: the LID when known, else the phone JID; beta: the user id with the
 * access hash, so the edge can address them after any relay restart); `phone` is E.164 when known.
 */
export type Peer = { id: string; phone: string | null; lid: string | null; name: string | null; username?: string | null }

export type InboundMessage = {
  /** The upstream's message id; the edge de-duplicates on it, so re-delivery after a reconnect is safe. */
  upstreamId: string
  from: Peer
  text: string
  media: { url: string; contentType: string | null } | null
  /** Upstream timestamp, epoch ms. */
  sentAt: number
  /**
   * Optional: the relay core calls it once the edge has stored the message. A driver that can hold back its
   * upstream acknowledgement until then (the simulator does) keeps the message at the upstream through a relay
   * crash, so it is redelivered instead of lost.
   */
  onCommitted?: () => void
}

export type Receipt = ({ upstreamId: string; status: 'delivered' | 'read' } | { upstreamId: string; status: 'failed'; error: string }) & {
  /** Optional, as for InboundMessage: called once the edge has applied the receipt. */
  onCommitted?: () => void
}

/**
 * What `send` rejects with when the upstream refused the message for good (unknown number, restricted account):
 * the edge marks it failed with this message. A driver may instead reject with its own error carrying
 * `retryable: false` (isPermanentSendError). Any other rejection counts as transient and the edge hands the
 * message over again (after a reconnect, or at the next retry) until it is 10 minutes old.
 */
export class PermanentSendError extends Error {
  constructor(
    message: string,
    readonly code: number | null = null
  ) {
    super(message)
    this.name = 'PermanentSendError'
  }
}

/** Whether a `send` rejection is final: a PermanentSendError, or a driver error that says it is not retryable. */
export function isPermanentSendError(err: unknown): err is Error {
  if (err instanceof PermanentSendError) return true
  return err instanceof Error && 'retryable' in err && err.retryable === false
}

export type OutboundMessage = {
  /** The gateway's message id (kept next to the upstream id so receipts map back). */
  messageId: string
  to: { phone: string | null; peerId: string | null }
  text: string
  /** Already validated as a public https URL by the edge; drivers must still never pass other schemes upstream. */
  mediaUrl: string | null
}

export type ImportedContact = Peer & { hasChat: boolean }

export type ConnectorEvents = {
  state(s: SessionState): void
  inbound(m: InboundMessage): void
  receipt(r: Receipt): void
  /** Address-book and chat contacts, for `import_contacts` / `import_existing_chats`. */
  contacts?(c: ImportedContact[]): void
}

/**
 * Persistence of one session's credentials and keys. Values are the driver's own serialisation (Baileys: BufferJSON);
 * the relay core encrypts them with RELAY_SESSION_KEY before they leave the process and stores them at the edge, so
 * any relay holding the key can resume the session. `write` must be durable before it resolves.
 */
export type SessionStore = {
  loadAll(): Promise<Map<string, string>>
  write(changes: Map<string, string | null>): Promise<void>
  clear(): Promise<void>
}

export type ConnectorOptions = {
  /** The account id: the E.164 number for alpha. */
  accountId: string
  phone: string
  linkMethod: LinkMethod
  /** Discard any stored session and link from scratch. */
  forceNew: boolean
  store: SessionStore
  events: ConnectorEvents
  log: Logger
}

/** One login step the user answered (beta). The secret crosses once and is never stored or logged. */
export type LoginStep = { kind: 'code'; code: string } | { kind: 'password'; password: string }

/** Why a login step was refused; stable codes, the edge maps them to its error codes. */
export type LoginError =
  | 'code_invalid'
  | 'code_expired'
  | 'password_invalid'
  | 'too_many_attempts'
  | 'unknown_number'
  | 'number_banned'
  | 'no_login_pending'
  | 'login_failed'

export type LoginOutcome =
  | { status: 'connected'; userId: string; username: string | null }
  | { status: 'password_required'; hint: string | null }
  | { status: 'refused'; error: LoginError; message: string; retryAfterS: number | null }

export type Connector = {
  /** Connects: resumes the stored session, or starts linking (QR or pairing code). */
  start(): Promise<void>
  /** Resolves with the upstream id once the message is handed to the upstream. */
  send(m: OutboundMessage): Promise<{ upstreamId: string }>
  /** Unlinks upstream and wipes the stored session. */
  logout(): Promise<void>
  /** Closes without logging out (shutdown, failover); the session can resume elsewhere. */
  stop(): Promise<void>
  /** beta: answers the login step the session is waiting for (a code, then maybe a password). */
  login?(step: LoginStep): Promise<LoginOutcome>
}

export type Driver = (opts: ConnectorOptions) => Connector
