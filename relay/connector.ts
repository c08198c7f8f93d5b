/**
 * The driver interface every network implements (relay/alpha via Baileys, relay/beta via GramJS, relay/sim). The
 * relay core (link to the Worker, leases, session persistence, acks) only ever sees these types, never an upstream's.
 */
import type { Logger } from 'pino'
import type { z } from 'zod'
import type * as Frames from '../schema/frames'

/*
 * The shapes that cross the link come from the frame protocol (schema/frames.ts), so the driver interface and what
 * the edge parses cannot drift apart.
 */
export type LinkMethod = Frames.FrameOf<'assign'>['linkMethod']

/**
 * Why a session is not (or no longer) usable. Codes are stable; clients switch on them, never on the text.
 * logged_out: the user removed the linked device or the upstream logged the session out (alpha 401; beta 401, or
 * 406 AUTH_KEY_DUPLICATED, which kills the key for good); the session is wiped. blocked_by_alpha: the upstream restricted or banned the number (alpha 402/403/406, send error 463).
 * replaced: another client took over the same session (alpha 440). passkey_required: the phone demands a passkey to
 * link a new device. link_expired: the link window ran out before the phone confirmed. unresponsive: the upstream
 * stopped answering and reconnects are failing. client_outdated: the upstream refuses the client library's version (alpha
 * 405, repeated): the relay operator must upgrade it. session_unreadable: the relay core cannot decrypt the stored
 * session.
 */
export type SessionProblem = Frames.SessionProblem

/**
 * beta's own problems, and the ones it shares with alpha (logged_out, link_expired, unresponsive). beta has no
 * `replaced`: a key used from two places (AUTH_KEY_DUPLICATED) is invalidated for good, so it is `logged_out`.
 */
export type BetaProblem = Extract<
  SessionProblem,
  'logged_out' | 'link_expired' | 'unresponsive' | 'blocked_by_beta' | 'stranger_flag' | 'flood_wait' | 'unknown_number' | 'too_many_attempts' | 'wrong_number'
>
/** The problems an alpha (or simulated) session can have. */
export type AlphaProblem = Exclude<SessionProblem, 'blocked_by_beta' | 'stranger_flag' | 'flood_wait' | 'unknown_number' | 'too_many_attempts' | 'wrong_number'>

export type SessionState = Frames.SessionState

/** A person on the network. `id` is stable (alpha: the LID when known, else the phone JID); `phone` is E.164 when known. */
export type Peer = Frames.Peer

/**
 * An inbound message (the upstream's id is de-duplicated at the edge, so re-delivery after a reconnect is safe).
 * `onCommitted`, optional, is called by the relay core once the edge has stored the message: a driver that can hold
 * back its upstream acknowledgement until then keeps the message at the upstream through a relay crash, so it is
 * redelivered instead of lost; one whose upstream counts it delivered on receipt (alpha, and the simulator, which
 * behaves as alpha does) uses it to let a stop wait until nothing acknowledged is left only in the process.
 */
export type InboundMessage = z.infer<typeof Frames.InboundMessage> & {
  onCommitted?: () => void
  /** Media to store in the gateway before the message is reported (it becomes `media` once uploaded). */
  attachment?: InboundAttachment
}

export type MediaKind = (typeof Frames.MEDIA_KINDS)[number]

/**
 * An inbound item the relay core stores in the gateway's media store (relay/link/media-upload.ts). `open` gives the
 * decrypted content as a stream and may be called again on a retry.
 */
export type InboundAttachment = {
  kind: MediaKind
  contentType: string
  fileName: string | null
  /** What the upstream says the item weighs, when it says: an item over the cap is then never downloaded. */
  declaredSize: number | null
  open(): Promise<NodeJS.ReadableStream>
}

/** A delivery, read or failure receipt; `onCommitted` as for InboundMessage. */
export type Receipt = z.infer<typeof Frames.Receipt> & { onCommitted?: () => void }

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

/** `mediaUrl` was validated as a public https URL by the edge; drivers must still never pass other schemes upstream. */
export type OutboundMessage = Frames.OutboundMessage

export type ImportedContact = z.infer<typeof Frames.ImportedContact>

export type ConnectorEvents = {
  state(s: SessionState): void
  inbound(m: InboundMessage): void
  receipt(r: Receipt): void
  /** Address-book and chat contacts, for `import_contacts` / `import_existing_chats`. */
  contacts?(c: ImportedContact[]): void
  /** A person reacted to a message of the chat (issue 25); `emoji` '' removed the reaction. */
  reaction?(r: InboundReaction): void
  /** The network warned the account it is near or at one of its limits (issue 25), or lifted the warning. */
  risk?(r: RiskReport): void
}

export type InboundReaction = z.infer<typeof Frames.InboundReaction>
export type RiskReport = z.infer<typeof Frames.RiskReport>
/** A reaction, typing, read marks or a lookup the edge asks of the session (issue 25), answered once. */
export type ChatAction = Frames.ChatAction
export type ActionOutcome = Frames.ActionOutcome

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
  /**
   * alpha: the tenant's alpha_passkey_linking. On, a phone that asks for a passkey gets the ceremony (the owner's
   * assertion comes through `login`); off or absent, linking ends with passkey_required.
   */
  passkeyLinking?: boolean
  store: SessionStore
  events: ConnectorEvents
  log: Logger
}

/** One login step the user answered (beta). The secret crosses once and is never stored or logged. */
export type LoginStep = Frames.LoginStep
export type LoginOutcome = Frames.LoginOutcome
/** Why a login step was refused; stable codes, the edge maps them to its error codes. */
export type LoginError = Extract<LoginOutcome, { status: 'refused' }>['error']

export type Connector = {
  /** Connects: resumes the stored session, or starts linking (QR or pairing code). */
  start(): Promise<void>
  /** Resolves with the upstream id once the message is handed to the upstream. */
  send(m: OutboundMessage): Promise<{ upstreamId: string }>
  /** Unlinks upstream and wipes the stored session. */
  logout(): Promise<void>
  /** Closes without logging out (shutdown, failover); the session can resume elsewhere. */
  stop(): Promise<void>
  /** beta: answers the login step the session is waiting for (a code, then maybe a password); alpha: the passkey steps. */
  login?(step: LoginStep): Promise<LoginOutcome>
  /** Carries out a chat action (issue 25); absent: the driver answers `unsupported` for every action. */
  act?(action: ChatAction): Promise<ActionOutcome>
}

export type Driver = (opts: ConnectorOptions) => Connector
