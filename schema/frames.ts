/**
 * The relay protocol: every frame between a relay (relay/) and the Worker's RelayHubDO (worker/relay/), as one zod
 * discriminated union parsed on both sides (`Frame.parse(JSON.parse(raw))`). Shapes mirror relay/connector.ts.
 *
 * Delivery rules: relay frames that carry an `id` are kept by the relay until the edge answers `ack` (or `reject`,
 * or `session_data` for a load) and are resent after a reconnect; the edge acks only after the change committed and
 * de-duplicates on upstream ids. Every session frame carries the lease's fencing number; the edge refuses a stale one.
 */
import { z } from 'zod'
import { PasskeyAssertion, PasskeyCode, PasskeyRequestOptionsJson } from './passkey'

export const FRAME_PROTOCOL_VERSION = 1

/** The heartbeat. The edge answers it with PONG_TEXT without waking (WebSocket auto-response), so both are fixed strings. */
export const PING_TEXT = '{"type":"ping"}'
export const PONG_TEXT = '{"type":"pong"}'

export const RELAY_CHANNELS = ['alpha_web', 'beta'] as const
export type RelayChannel = (typeof RELAY_CHANNELS)[number]

const SessionId = z.string().min(1).max(64)
const Fence = z.number().int().min(1)
const FrameId = z.string().min(1).max(64)
const EpochMs = z.number().int().min(0)

export const SESSION_PROBLEMS = [
  'logged_out',
  'blocked_by_alpha',
  'replaced',
  'passkey_required',
  /** alpha passkey linking (tenant setting alpha_passkey_linking): the owner gave no assertion, or no code confirmation, in time. */
  'passkey_expired',
  /** alpha passkey linking: alpha refused a step of the ceremony (the assertion, the nonce, the pairing request). */
  'passkey_rejected',
  /** alpha passkey linking: alpha or the phone did not answer a step in time, or the connection dropped mid-ceremony. */
  'passkey_timeout',
  'link_expired',
  'unresponsive',
  /** The upstream refuses the relay's client version (alpha 405, repeated); the relay operator must upgrade it. */
  'client_outdated',
  'blocked_by_beta',
  'stranger_flag',
  'flood_wait',
  'unknown_number',
  'too_many_attempts',
  /** beta: a QR login was confirmed in the app of another account than the number being connected; it was logged out. */
  'wrong_number',
  /** Relay core, not a driver: the stored session cannot be decrypted with this relay's RELAY_SESSION_KEY. */
  'session_unreadable',
] as const
export const SessionProblem = z.enum(SESSION_PROBLEMS)
export type SessionProblem = z.infer<typeof SessionProblem>

/**
 * Ban-risk signals (issue 25): what a network tells an account when it is near or at one of its limits. The relay's
 * drivers report the network's own (`risk` frame); the edge adds the providers' (SMS carrier filtering, the page
 * inbox's policy block). While one is in force the account takes no new contacts (docs/api.md, "Ban-risk signals").
 * - reachout_timelock: alpha's reach-out time lock (no new chats until it ends);
 * - new_chat_refused: alpha refused a new chat with error 463;
 * - new_chat_cap: alpha's new-chat message cap warned or capped;
 * - flood_wait: beta asked the account to slow down;
 * - spam_flag: beta limited the account for messaging strangers (PEER_FLOOD);
 * - carrier_filtering: a carrier filtered an SMS as spam (Twilio 30007);
 * - policy_block: the social network blocked a send as abusive (Graph error 368).
 */
export const RISK_SIGNALS = ['reachout_timelock', 'new_chat_refused', 'new_chat_cap', 'flood_wait', 'spam_flag', 'carrier_filtering', 'policy_block'] as const
export type RiskSignalName = (typeof RISK_SIGNALS)[number]

export const SessionState = z.discriminatedUnion('state', [
  z.object({ state: z.literal('qr_pending'), qr: z.string().min(1).max(4096), expiresAt: EpochMs }),
  z.object({ state: z.literal('pairing_code'), code: z.string().min(1).max(16), expiresAt: EpochMs }),
  z.object({ state: z.literal('code_required'), expiresAt: EpochMs.nullable() }),
  z.object({ state: z.literal('password_required'), hint: z.string().max(256).nullable(), expiresAt: EpochMs.nullable() }),
  /** alpha: the phone wants the owner's passkey; the relay waits for the assertion made from these options. */
  z.object({ state: z.literal('passkey_required'), requestOptions: PasskeyRequestOptionsJson, expiresAt: EpochMs }),
  /** alpha: the short code of the passkey ceremony; `confirm`: the owner must say it matches the phone before it goes on. */
  z.object({ state: z.literal('passkey_code'), code: PasskeyCode, confirm: z.boolean(), expiresAt: EpochMs }),
  z.object({ state: z.literal('connecting') }),
  z.object({ state: z.literal('connected'), identifier: z.string().max(256), upstreamUserId: z.string().max(256).nullable() }),
  z.object({ state: z.literal('disconnected'), problem: SessionProblem, message: z.string().max(1000) }),
  z.object({ state: z.literal('restricted'), problem: SessionProblem, message: z.string().max(1000), until: EpochMs.nullable() }),
  z.object({ state: z.literal('slowed'), problem: z.literal('flood_wait'), message: z.string().max(1000), until: EpochMs }),
])
export type SessionState = z.infer<typeof SessionState>

export const Peer = z.object({
  id: z.string().min(1).max(256),
  phone: z.string().max(32).nullable(),
  lid: z.string().max(256).nullable(),
  name: z.string().max(256).nullable(),
  /** beta: the public @username, without the @. */
  username: z.string().max(64).nullable().optional(),
})
export type Peer = z.infer<typeof Peer>

/** Upstream apps allow longer texts than the send API does; an inbound message is stored as the upstream gave it. */
const MAX_FRAME_TEXT_CHARS = 65_536

export const MEDIA_KINDS = ['image', 'video', 'audio', 'voice_note', 'document', 'sticker'] as const

/**
 * An item the relay put in the media store before sending the message (PUT /relay/media/{sid}/{upstreamId}): the
 * edge derives the media id from the message itself, so only the facts travel. `tooLarge` carries the reason when
 * the upload answered `too_large`.
 */
export const StoredMedia = z.object({
  kind: z.enum(MEDIA_KINDS),
  size: z.number().int().min(0),
  fileName: z.string().max(512).nullable(),
  tooLarge: z.string().max(1000).nullable(),
})

export const InboundMessage = z.object({
  upstreamId: z.string().min(1).max(256),
  from: Peer,
  text: z.string().max(MAX_FRAME_TEXT_CHARS),
  /** `url`: the upload's answer for stored media (`…/media/{id}`), or a link the upstream gave (older relays). */
  media: z.object({ url: z.string().max(4096), contentType: z.string().max(200).nullable(), stored: StoredMedia.optional() }).nullable(),
  sentAt: EpochMs,
  /** The upstream id of the message this one quotes, when it is a reply (issue 25). */
  replyTo: z.string().min(1).max(256).optional(),
})

/** A person's reaction to a message of the chat (either direction), by the message's upstream id; `emoji` '' removes it. */
export const InboundReaction = z.object({
  upstreamId: z.string().min(1).max(256),
  from: Peer,
  emoji: z.string().max(32),
  at: EpochMs,
})

/**
 * A ban-risk signal a driver heard from its network (RISK_SIGNALS): `active` false lifts it. `until` when the network
 * said how long it lasts.
 */
export const RiskReport = z.object({
  signal: z.enum(RISK_SIGNALS),
  active: z.boolean(),
  until: EpochMs.nullable(),
  detail: z.string().max(1000),
})

export const Receipt = z.discriminatedUnion('status', [
  z.object({ upstreamId: z.string().min(1).max(256), status: z.enum(['delivered', 'read']) }),
  z.object({
    upstreamId: z.string().min(1).max(256),
    status: z.literal('failed'),
    error: z.string().max(1000),
    /** The network's error code (alpha's 463, …), the message's `error.code`; absent from relays older than this field. */
    code: z.number().int().nullable().optional(),
  }),
])

export const OutboundMessage = z.object({
  messageId: z.string().min(1).max(64),
  to: z.object({ phone: z.string().max(32).nullable(), peerId: z.string().max(256).nullable() }),
  text: z.string().max(MAX_FRAME_TEXT_CHARS),
  mediaUrl: z.string().max(4096).nullable(),
  /**
   * The message this one quotes (issue 25): its upstream id, whether the account sent it, and its text (alpha shows
   * the quoted text from the message itself). Absent from edges older than this field.
   */
  replyTo: z
    .object({ upstreamId: z.string().min(1).max(256), fromMe: z.boolean(), text: z.string().max(MAX_FRAME_TEXT_CHARS) })
    .nullable()
    .optional(),
})
export type OutboundMessage = z.infer<typeof OutboundMessage>

const ActionPeer = z.object({ phone: z.string().max(32).nullable(), peerId: z.string().max(256).nullable() })

/**
 * One thing the account does in a chat besides sending (issue 25), asked of the relay holding its session and answered
 * once (`action_result`), never queued: a reaction (`emoji` '' removes ours), typing for a few seconds, read marks
 * up to the given inbound messages, or whether a number is on the network.
 */
export const ChatAction = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('react'),
    to: ActionPeer,
    target: z.object({ upstreamId: z.string().min(1).max(256), fromMe: z.boolean() }),
    emoji: z.string().max(32),
  }),
  z.object({ kind: z.literal('typing'), to: ActionPeer }),
  z.object({ kind: z.literal('read'), to: ActionPeer, upstreamIds: z.array(z.string().min(1).max(256)).min(1).max(100) }),
  z.object({ kind: z.literal('lookup'), phone: z.string().min(2).max(32) }),
])
export type ChatAction = z.infer<typeof ChatAction>

/**
 * Why an action was not done: not_connected (the session cannot act now), unsupported (the driver has no such
 * action), refused (the network said no; `message` says why), flood_wait (the network asked to wait `retryAfterS`).
 */
export const ACTION_ERRORS = ['not_connected', 'unsupported', 'refused', 'flood_wait'] as const
export const ActionOutcome = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    /** lookup: whether the number is on the network, null when the driver cannot tell (`reason` says why). */
    onNetwork: z.boolean().nullable().optional(),
    reason: z.string().max(1000).nullable().optional(),
  }),
  z.object({
    ok: z.literal(false),
    error: z.enum(ACTION_ERRORS),
    message: z.string().max(1000),
    retryAfterS: z.number().int().min(0).nullable(),
  }),
])
export type ActionOutcome = z.infer<typeof ActionOutcome>

export const ImportedContact = Peer.extend({ hasChat: z.boolean() })

/** Ciphertext only: names are keyed MACs and values AES-GCM under the relay's RELAY_SESSION_KEY (relay/crypto.ts). */
const SessionEntries = z.record(z.string().min(1).max(128), z.string().max(2_000_000))

const session = { sid: SessionId, fence: Fence }

// ── relay → edge ──────────────────────────────────────────────────────────────────────────────────────────────────

export const HelloFrame = z.object({
  type: z.literal('hello'),
  protocol: z.literal(FRAME_PROTOCOL_VERSION),
  /** Random per relay process: a reconnect of the same process keeps its sessions, a restarted process does not. */
  instance: z.string().min(8).max(64),
  version: z.string().max(64),
  driver: z.string().max(32),
  channels: z.array(z.enum(RELAY_CHANNELS)).min(1),
  /** Sessions this process is still running (after a reconnect); the edge re-binds those whose fence is current. */
  sessions: z.array(z.object(session)).max(100_000),
  draining: z.boolean(),
})

export const PingFrame = z.object({ type: z.literal('ping') })
export const DrainingFrame = z.object({ type: z.literal('draining') })

export const StateFrame = z.object({ type: z.literal('state'), id: FrameId, ...session, state: SessionState, at: EpochMs })
export const InboundFrame = z.object({ type: z.literal('inbound'), id: FrameId, ...session, message: InboundMessage })
export const ReceiptFrame = z.object({ type: z.literal('receipt'), id: FrameId, ...session, receipt: Receipt })
export const SentFrame = z.object({
  type: z.literal('sent'),
  id: FrameId,
  ...session,
  messageId: z.string().min(1).max(64),
  upstreamId: z.string().min(1).max(256),
})
export const SendFailedFrame = z.object({
  type: z.literal('send_failed'),
  id: FrameId,
  ...session,
  messageId: z.string().min(1).max(64),
  error: z.string().max(1000),
  code: z.number().int().nullable(),
})
export const ReactionFrame = z.object({ type: z.literal('reaction'), id: FrameId, ...session, reaction: InboundReaction })
export const RiskFrame = z.object({ type: z.literal('risk'), id: FrameId, ...session, risk: RiskReport })
/** The answer to an `action` frame: sent once, not kept (the edge's request times out and the caller tries again). */
export const ActionResultFrame = z.object({ type: z.literal('action_result'), id: FrameId, sid: SessionId, outcome: ActionOutcome })
export const ContactsFrame = z.object({ type: z.literal('contacts'), id: FrameId, ...session, contacts: z.array(ImportedContact).max(20_000) })
export const SessionLoadFrame = z.object({ type: z.literal('session_load'), id: FrameId, ...session })
export const SessionWriteFrame = z.object({
  type: z.literal('session_write'),
  id: FrameId,
  ...session,
  clear: z.boolean(),
  changes: z.record(z.string().min(1).max(128), z.string().max(2_000_000).nullable()),
})
export const ReleasedFrame = z.object({ type: z.literal('released'), id: FrameId, ...session, reason: z.enum(['draining', 'stopped']) })
export const ProbeResultFrame = z.object({ type: z.literal('probe_result'), id: FrameId, sid: SessionId, state: SessionState.nullable() })

export const LOGIN_ERRORS = [
  'code_invalid',
  'code_expired',
  'password_invalid',
  'too_many_attempts',
  'unknown_number',
  'number_banned',
  'no_login_pending',
  'login_failed',
] as const
export const LoginOutcome = z.discriminatedUnion('status', [
  z.object({ status: z.literal('connected'), userId: z.string().max(64), username: z.string().max(64).nullable() }),
  /** alpha passkey linking: alpha took the step (the assertion, or the owner's code confirmation); states follow. */
  z.object({ status: z.literal('accepted') }),
  z.object({ status: z.literal('password_required'), hint: z.string().max(256).nullable() }),
  z.object({ status: z.literal('refused'), error: z.enum(LOGIN_ERRORS), message: z.string().max(1000), retryAfterS: z.number().int().min(0).nullable() }),
])
export type LoginOutcome = z.infer<typeof LoginOutcome>
/** The answer to a `login` frame: sent once, not kept (the edge's request times out and the user tries again). */
export const LoginResultFrame = z.object({ type: z.literal('login_result'), id: FrameId, sid: SessionId, outcome: LoginOutcome })

// ── edge → relay ──────────────────────────────────────────────────────────────────────────────────────────────────

export const WelcomeFrame = z.object({
  type: z.literal('welcome'),
  relayId: z.string(),
  tenantId: z.string().nullable(),
  /** A session's lease lasts this long after the last heartbeat the edge saw; the relay stops its sessions before. */
  leaseMs: z.number().int().min(1000),
  heartbeatMs: z.number().int().min(100),
  /**
   * The edge takes a WebSocket message holding a JSON array of up to RELAY_BATCH_FRAMES_MAX relay frames, handled in
   * order as if each had come alone (relay/link/socket.ts sends a burst so). Absent: one frame per message.
   */
  batches: z.boolean().optional(),
})
/** Relay frames in one batched WebSocket message, at most (see WelcomeFrame.batches). */
export const RELAY_BATCH_FRAMES_MAX = 256
export const PongFrame = z.object({ type: z.literal('pong') })
export const AckFrame = z.object({ type: z.literal('ack'), ids: z.array(FrameId).min(1) })
export const RejectFrame = z.object({
  type: z.literal('reject'),
  id: FrameId,
  sid: SessionId.nullable(),
  /**
   * The fencing number of the refused frame: the relay stops its session only if it still runs under that number or
   * an older one, so a late refusal of an earlier holder's frame never stops the session that replaced it (same sid).
   * Absent from edges older than this field: then the session with that sid is stopped.
   */
  fence: Fence.nullable().optional(),
  /** stale_fence / unknown_session: this relay does not hold the session (any more) and must stop it. */
  reason: z.enum(['stale_fence', 'unknown_session', 'invalid']),
})
export const AssignFrame = z.object({
  type: z.literal('assign'),
  ...session,
  account: z.object({ tenantId: z.string(), accountId: z.string(), channel: z.enum(RELAY_CHANNELS), phone: z.string() }),
  linkMethod: z.enum(['qr', 'pairing_code', 'code']),
  forceNew: z.boolean(),
  importContacts: z.boolean(),
  /** alpha: the tenant's alpha_passkey_linking setting; off (and absent, from older edges): a passkey demand ends linking. */
  passkeyLinking: z.boolean().optional(),
})
export const RevokeFrame = z.object({ type: z.literal('revoke'), ...session, reason: z.enum(['moved', 'removed', 'stale']) })
export const LogoutFrame = z.object({ type: z.literal('logout'), ...session })
export const SendFrame = z.object({ type: z.literal('send'), ...session, message: OutboundMessage, expiresAt: EpochMs })
export const SessionDataFrame = z.object({ type: z.literal('session_data'), id: FrameId, sid: SessionId, entries: SessionEntries })
export const ProbeFrame = z.object({ type: z.literal('probe'), id: FrameId, sid: SessionId })
/**
 * beta: the code or two-step password the user typed, for the session waiting for it; alpha: the owner's passkey
 * assertion, then (when alpha asks for it) the owner's word that the codes match. The secret crosses in this one
 * frame and is forgotten: neither side stores or logs it (a frame that fails to parse is logged without its body).
 */
export const LoginStep = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('code'), code: z.string().min(1).max(16) }),
  z.object({ kind: z.literal('password'), password: z.string().min(1).max(256) }),
  z.object({ kind: z.literal('passkey_assertion'), assertion: PasskeyAssertion }),
  z.object({ kind: z.literal('passkey_confirm') }),
])
export type LoginStep = z.infer<typeof LoginStep>
export const LoginFrame = z.object({ type: z.literal('login'), id: FrameId, ...session, step: LoginStep })
export const ActionFrame = z.object({ type: z.literal('action'), id: FrameId, ...session, action: ChatAction })

export const RelayFrame = z.discriminatedUnion('type', [
  HelloFrame,
  PingFrame,
  DrainingFrame,
  StateFrame,
  InboundFrame,
  ReceiptFrame,
  SentFrame,
  SendFailedFrame,
  ContactsFrame,
  SessionLoadFrame,
  SessionWriteFrame,
  ReleasedFrame,
  ProbeResultFrame,
  LoginResultFrame,
  ReactionFrame,
  RiskFrame,
  ActionResultFrame,
])
export type RelayFrame = z.infer<typeof RelayFrame>

export const EdgeFrame = z.discriminatedUnion('type', [
  WelcomeFrame,
  PongFrame,
  AckFrame,
  RejectFrame,
  AssignFrame,
  RevokeFrame,
  LogoutFrame,
  SendFrame,
  SessionDataFrame,
  ProbeFrame,
  LoginFrame,
  ActionFrame,
])
export type EdgeFrame = z.infer<typeof EdgeFrame>

/** Every frame of the protocol, either direction. */
export const Frame = z.union([RelayFrame, EdgeFrame])
export type Frame = z.infer<typeof Frame>

/** Relay frames that wait for an ack (or a reply) and are resent after a reconnect. */
export type ReliableRelayFrame = Extract<RelayFrame, { id: string }>
export type FrameOf<T extends RelayFrame['type'] | EdgeFrame['type']> = Extract<Frame, { type: T }>

/** A send as the AccountDO hands it to the hub for the relay holding the session: the `send` frame without the session. */
export type QueuedSend = Pick<FrameOf<'send'>, 'message' | 'expiresAt'>

/** Close codes the edge uses on a relay link; the relay stops every session at once on RELAY_REVOKED. */
export const CLOSE = {
  HEARTBEAT_TIMEOUT: 4008,
  REVOKED: 4003,
  PROTOCOL: 4002,
} as const
