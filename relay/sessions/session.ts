/**
 * One session this relay runs under a lease: the driver's connector, wired to frames. Upstream events become
 * reliable frames (the upstream is acknowledged through `onCommitted` once the edge stored them); edge sends are
 * held until the session can send, de-duplicated by message id (a resend after a reconnect is answered from
 * memory, not sent twice) and refused once they expired.
 *
 * A `restricted` session still hands sends to its connector: a restriction alpha reports while connected (a 463,
 * the reach-out time lock) stops new chats only, and the driver, which knows the chats, refuses the rest with
 * `account_restricted`. A send the connector cannot take because it is not connected goes back to being held.
 */
import type { Logger } from 'pino'
import type { FrameOf, OutboundMessage, RelayChannel, SessionState } from '../../schema/frames'
import {
  isPermanentSendError,
  PermanentSendError,
  type ActionOutcome,
  type ChatAction,
  type Connector,
  type Driver,
  type ImportedContact,
  type InboundMessage,
  type LoginOutcome,
  type LoginStep,
  type Receipt,
} from '../connector'
import { SessionUnreadableError, type SessionCrypto } from '../crypto'
import type { Reply } from '../link/outbox'
import type { RelayFrame, ReliableRelayFrame } from '../../schema/frames'
import { EdgeSessionStore, LeaseLostError } from './edge-store'
import { UploadRefusedError, type MediaUploader } from '../link/media-upload'
import type { RelayMeter } from '../metrics'

export type SessionLink = {
  request(frame: ReliableRelayFrame, coalesceKey?: string | null): Promise<Reply>
  send(frame: RelayFrame): boolean
}

export type SessionDeps = {
  driver: Driver
  link: SessionLink
  crypto: SessionCrypto
  log: Logger
  nextId: () => string
  /** The edge says another relay holds this session now. */
  /** The edge refused this session's frame sent under `fence`: another relay (or a newer session) holds it. */
  onLeaseLost(sid: string, fence: number): void
  /** Stores an inbound item in the gateway's media store (relay/link/media-upload.ts); absent: attachments are dropped. */
  uploadMedia?: MediaUploader
  /** Send and inbound latencies, uploads, state changes and upstream acks for GET /metrics. */
  meter?: RelayMeter
}

/** Items of one session uploading at once; the messages are still reported in the order they came. */
const UPLOADS_AT_ONCE = 4

/** Message ids already handed upstream, remembered so a resend is answered without sending twice. */
const SENT_MEMORY = 10_000

/** Sends go to the connector while connected, and while restricted (the driver decides which recipients it may reach). */
function canSend(state: SessionState | null): boolean {
  return state?.state === 'connected' || state?.state === 'restricted'
}

export class RunningSession {
  readonly sid: string
  readonly fence: number
  readonly account: FrameOf<'assign'>['account']
  readonly channel: RelayChannel
  state: SessionState | null = null
  stateAt: number | null = null
  private connector: Connector | null = null
  private stopped = false
  private readonly sent = new Map<string, string>()
  private readonly inflight = new Set<string>()
  private readonly held = new Map<string, { message: OutboundMessage; expiresAt: number }>()
  private readonly log: Logger
  /** Inbound messages are reported in arrival order, each after its media (if any) is stored. */
  private inboundTail: Promise<void> = Promise.resolve()
  private uploading = 0
  private readonly uploadQueue: Array<() => void> = []

  constructor(
    private readonly assign: FrameOf<'assign'>,
    private readonly deps: SessionDeps
  ) {
    this.sid = assign.sid
    this.fence = assign.fence
    this.account = assign.account
    this.channel = assign.account.channel
    this.log = deps.log.child({ sid: this.sid, account: assign.account.accountId, fence: this.fence })
  }

  get key(): string {
    return `${this.account.tenantId}/${this.account.accountId}`
  }

  async start(): Promise<void> {
    const store = new EdgeSessionStore(this.deps.link, this.sid, this.fence, this.key, this.deps.crypto, this.deps.nextId)
    this.connector = this.deps.driver({
      accountId: this.account.accountId,
      phone: this.account.phone,
      linkMethod: this.assign.linkMethod,
      forceNew: this.assign.forceNew,
      passkeyLinking: this.assign.passkeyLinking,
      store,
      log: this.log,
      events: {
        state: (s) => this.onState(s),
        inbound: (m) => this.onInbound(m),
        receipt: (r) => this.onReceipt(r),
        contacts: (c) => this.onContacts(c),
        reaction: (reaction) => void this.report({ type: 'reaction', id: this.deps.nextId(), sid: this.sid, fence: this.fence, reaction }),
        risk: (risk) => void this.report({ type: 'risk', id: this.deps.nextId(), sid: this.sid, fence: this.fence, risk }),
      },
    })
    this.log.info({ link_method: this.assign.linkMethod, force_new: this.assign.forceNew }, 'session starting')
    try {
      await this.connector.start()
    } catch (err) {
      if (err instanceof LeaseLostError) return this.deps.onLeaseLost(this.sid, this.fence)
      if (err instanceof SessionUnreadableError) {
        this.log.error('the stored session does not decrypt with this RELAY_SESSION_KEY')
        this.onState({
          state: 'disconnected',
          problem: 'session_unreadable',
          message: 'The stored session was written with another RELAY_SESSION_KEY; link again with force_new.',
        })
        return
      }
      this.log.error({ err: err instanceof Error ? err.message : String(err) }, 'session failed to start')
      this.onState({ state: 'disconnected', problem: 'unresponsive', message: 'The session could not be started on the relay.' })
    }
  }

  /** Sends waiting until the session can send (GET /metrics: relay_queued_sends). */
  get heldSends(): number {
    return this.held.size
  }

  /** Closes without logging out: the session resumes on whichever relay holds it next. */
  async stop(): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    this.log.info('session stopping')
    await this.connector?.stop().catch((err: unknown) => this.log.warn({ err: String(err) }, 'connector stop failed'))
  }

  /** Unlinks upstream and wipes the session (the account was removed). */
  async logout(): Promise<void> {
    this.stopped = true
    this.log.info('session logging out')
    await this.connector?.logout().catch((err: unknown) => this.log.warn({ err: String(err) }, 'connector logout failed'))
  }

  /**
   * beta: the code or password the user typed, for the login this session waits for; alpha: the owner's passkey
   * assertion or code confirmation. Never logged: only the step's kind and the verdict are.
   */
  async login(step: LoginStep): Promise<LoginOutcome> {
    if (this.stopped || !this.connector?.login)
      return { status: 'refused', error: 'no_login_pending', message: 'This session is not waiting for a login step.', retryAfterS: null }
    try {
      const outcome = await this.connector.login(step)
      this.log.info({ step: step.kind, outcome: outcome.status, error: outcome.status === 'refused' ? outcome.error : undefined }, 'login step answered')
      return outcome
    } catch (err) {
      this.log.error({ step: step.kind, err: err instanceof Error ? err.name : 'unknown' }, 'login step failed')
      return { status: 'refused', error: 'login_failed', message: 'The login step failed on the relay; try again.', retryAfterS: null }
    }
  }

  /** A chat action (issue 25): answered once; a driver error becomes `refused` with its message, never a crash. */
  async act(action: ChatAction): Promise<ActionOutcome> {
    if (this.stopped || this.state?.state !== 'connected')
      return { ok: false, error: 'not_connected', message: 'The session is not connected on this relay.', retryAfterS: null }
    if (!this.connector?.act) return { ok: false, error: 'unsupported', message: `This relay's ${this.channel} driver cannot do this.`, retryAfterS: null }
    try {
      const outcome = await this.connector.act(action)
      this.log.info({ action: action.kind, ok: outcome.ok, error: outcome.ok ? undefined : outcome.error }, 'chat action answered')
      return outcome
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      this.log.warn({ action: action.kind, err: message }, 'chat action failed')
      return { ok: false, error: 'refused', message: message.slice(0, 1000), retryAfterS: null }
    }
  }

  send(message: OutboundMessage, expiresAt: number): void {
    if (this.stopped) return
    const known = this.sent.get(message.messageId)
    if (known)
      return void this.report({ type: 'sent', id: this.deps.nextId(), sid: this.sid, fence: this.fence, messageId: message.messageId, upstreamId: known })
    if (this.inflight.has(message.messageId)) return
    if (!canSend(this.state)) {
      this.held.set(message.messageId, { message, expiresAt })
      return
    }
    void this.deliver(message, expiresAt)
  }

  private async deliver(message: OutboundMessage, expiresAt: number): Promise<void> {
    const log = this.log.child({ message_id: message.messageId })
    if (Date.now() >= expiresAt) {
      log.warn('send expired before it could be handed upstream')
      return void this.report({
        type: 'send_failed',
        id: this.deps.nextId(),
        sid: this.sid,
        fence: this.fence,
        messageId: message.messageId,
        error: 'relay_unavailable: the message expired before a relay could send it',
        code: null,
      })
    }
    if (!this.connector) return
    this.inflight.add(message.messageId)
    const started = performance.now()
    const took = (outcome: 'sent' | 'refused' | 'failed') => this.deps.meter?.sendDone(this.channel, outcome, (performance.now() - started) / 1000)
    try {
      const { upstreamId } = await this.connector.send({
        messageId: message.messageId,
        to: message.to,
        text: message.text,
        mediaUrl: message.mediaUrl,
        ...(message.replyTo ? { replyTo: message.replyTo } : {}),
      })
      took('sent')
      this.sent.set(message.messageId, upstreamId)
      if (this.sent.size > SENT_MEMORY) this.sent.delete(this.sent.keys().next().value!)
      log.info({ upstream_id: upstreamId }, 'message handed upstream')
      await this.report({ type: 'sent', id: this.deps.nextId(), sid: this.sid, fence: this.fence, messageId: message.messageId, upstreamId })
    } catch (err) {
      took(isPermanentSendError(err) ? 'refused' : 'failed')
      if (isPermanentSendError(err)) {
        // A numeric upstream code travels to the message's error; a driver's own string codes stay in the log.
        const code = err instanceof PermanentSendError ? err.code : null
        log.warn({ code: 'code' in err ? err.code : null, error: err.message }, 'upstream refused the message')
        await this.report({
          type: 'send_failed',
          id: this.deps.nextId(),
          sid: this.sid,
          fence: this.fence,
          messageId: message.messageId,
          error: err.message,
          code,
        })
      } else if (this.state?.state !== 'connected' && !this.stopped) {
        // Restricted with the socket down (a ban): hold it like any send while not connected.
        this.held.set(message.messageId, { message, expiresAt })
      } else {
        // Transient: the edge hands it over again after a reconnect or at its next retry.
        log.warn({ err: err instanceof Error ? err.message : String(err) }, 'send failed; the edge will retry')
      }
    } finally {
      this.inflight.delete(message.messageId)
    }
  }

  private onState(s: SessionState): void {
    if (this.stopped) return
    this.state = s
    this.stateAt = Date.now()
    this.deps.meter?.sessionState(this.channel, s.state, 'problem' in s ? s.problem : null)
    this.log.info({ state: s.state, problem: 'problem' in s ? s.problem : undefined }, 'session state')
    void this.report({ type: 'state', id: this.deps.nextId(), sid: this.sid, fence: this.fence, state: s, at: this.stateAt }, `state:${this.sid}`)
    if (canSend(s)) {
      const held = [...this.held.values()]
      this.held.clear()
      for (const h of held) void this.deliver(h.message, h.expiresAt)
    }
  }

  private onInbound(m: InboundMessage): void {
    const { onCommitted, attachment, ...message } = m
    const started = performance.now()
    const stored = attachment ? this.storeAttachment(message.upstreamId, attachment) : null
    this.inboundTail = this.inboundTail.then(async () => {
      const media = stored ? await stored : undefined
      // The edge refused the upload (another relay holds the session): not reported, so not acknowledged upstream by a
      // driver that waits for that. A message that comes while the session stops is still reported: a driver may have
      // acknowledged it upstream already (alpha: Baileys' receipt goes before the message), and the edge takes data
      // from an earlier holder.
      if (media === 'stop') return
      const withMedia = media === undefined ? message : { ...message, media }
      void this.report({ type: 'inbound', id: this.deps.nextId(), sid: this.sid, fence: this.fence, message: withMedia }).then((ok) => {
        if (!ok) return
        this.deps.meter?.inboundDone(this.channel, (performance.now() - started) / 1000)
        this.committed(onCommitted)
      })
    })
  }

  /** The frame's media for an attachment, 'stop' when the edge refused (another relay holds the session). */
  private async storeAttachment(upstreamId: string, a: NonNullable<InboundMessage['attachment']>): Promise<InboundMessage['media'] | 'stop'> {
    const upload = this.deps.uploadMedia
    if (!upload) return null
    if (this.uploading >= UPLOADS_AT_ONCE) await new Promise<void>((r) => this.uploadQueue.push(r))
    this.uploading++
    this.log.info({ upstream_id: upstreamId, kind: a.kind, declared_size: a.declaredSize }, 'media upload started')
    try {
      const media = await upload(this.sid, this.fence, upstreamId, a)
      if (media.stored.tooLarge === null) this.deps.meter?.uploaded(this.channel, a.kind, media.stored.size)
      return media
    } catch (err) {
      if (err instanceof UploadRefusedError && (err.status === 409 || err.status === 401)) {
        this.deps.onLeaseLost(this.sid, this.fence)
        return 'stop'
      }
      // The message still arrives, without its media; the log says why (download failed even after a re-upload request).
      this.log.error({ upstream_id: upstreamId, kind: a.kind, err: err instanceof Error ? err.message : String(err) }, 'media could not be stored')
      return null
    } finally {
      this.uploading--
      this.uploadQueue.shift()?.()
    }
  }

  private onReceipt(r: Receipt): void {
    const { onCommitted, ...receipt } = r
    void this.report({ type: 'receipt', id: this.deps.nextId(), sid: this.sid, fence: this.fence, receipt }).then((ok) => ok && this.committed(onCommitted))
  }

  /** The edge stored it: the upstream may now forget it (the relay's acknowledgement out). */
  private committed(onCommitted: (() => void) | undefined): void {
    if (!onCommitted) return
    this.deps.meter?.upstreamAck()
    onCommitted()
  }

  private onContacts(contacts: ImportedContact[]): void {
    // beta's address book is what decides who may be messaged (§4.2), so it always goes to the edge.
    if ((!this.assign.importContacts && this.channel !== 'beta') || this.stopped) return
    void this.report({ type: 'contacts', id: this.deps.nextId(), sid: this.sid, fence: this.fence, contacts })
  }

  /** Sends a reliable frame; true once the edge acked it. A refusal for a stale lease stops the session. */
  private async report(frame: ReliableRelayFrame, coalesceKey: string | null = null): Promise<boolean> {
    const reply = await this.deps.link.request(frame, coalesceKey)
    // The link stopped for good (the relay is shutting down): the edge never got the frame.
    if (reply.type === 'link_closed') return false
    if (reply.type === 'reject') {
      if (reply.reason !== 'invalid') this.deps.onLeaseLost(this.sid, this.fence)
      else this.log.error({ frame: frame.type }, 'the edge refused a frame as invalid')
      return false
    }
    return true
  }

  /** What `probe` answers and the health endpoint counts. */
  snapshot(): SessionState | null {
    return this.state
  }
}
