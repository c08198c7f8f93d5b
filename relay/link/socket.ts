/**
 * The relay's one WebSocket to the Worker (GET /relay/connect, token in the Authorization header). It reconnects
 * with capped exponential backoff and jitter, says hello (with the sessions it still runs) on every connect,
 * heartbeats with the fixed ping the edge answers without waking, terminates a link whose pongs stop, and keeps
 * reliable frames in the outbox until the edge answers them. It also knows until when this relay's leases hold:
 * from the *send* time of the last answered heartbeat, which is never later than the edge's own reckoning.
 */
import { WebSocket } from 'ws'
import type { Logger } from 'pino'
import { reconnectReason, type RelayMeter } from '../metrics'
import { CLOSE, EdgeFrame, PING_TEXT, RELAY_BATCH_FRAMES_MAX, type FrameOf, type RelayFrame, type ReliableRelayFrame } from '../../schema/frames'
import {
  ACK_TIMEOUT_MS,
  BATCH_TEXT_MAX_CHARS,
  CONNECT_TIMEOUT_MS,
  DEFAULT_HEARTBEAT_MS,
  HEARTBEAT_MISSES,
  MIN_UPTIME_MS,
  reconnectDelayMs,
  SEND_WINDOW,
} from './backoff'
import { Outbox, type Reply } from './outbox'
import { RejectLog, type RejectStats } from './rejects'

export type LinkState = 'connecting' | 'open' | 'down' | 'stopped'

export type LinkOptions = {
  url: string
  token: string
  log: Logger
  /** The hello to send on each connect (it lists the sessions still running). */
  hello(): FrameOf<'hello'>
  /** Every edge frame other than acks, pongs and welcome. */
  onFrame(frame: EdgeFrame): void
  /** The edge refused the token (401/403) or revoked it (close 4003): this relay may not run anything. */
  onRefused(reason: string): void
  now?: () => number
  random?: () => number
  /** Counts frames, acks and reconnects for GET /metrics (relay/metrics.ts). */
  meter?: RelayMeter
}

export type LinkStats = {
  state: LinkState
  since: number
  lastFrameInAt: number | null
  lastFrameOutAt: number | null
  lastPongAt: number | null
  unacked: number
  reconnects: number
  rejects: RejectStats
}

export class RelayLink {
  private ws: WebSocket | null = null
  private readonly outbox = new Outbox()
  private state: LinkState = 'down'
  private since: number
  private attempt = 0
  private reconnects = 0
  private openedAt = 0
  private leaseMs: number | null = null
  private heartbeatMs = DEFAULT_HEARTBEAT_MS
  /** The edge's welcome said it takes several frames in one message (WelcomeFrame.batches). */
  private batches = false
  private flushQueued = false
  /** Send times of heartbeats not yet answered, oldest first. */
  private pings: number[] = []
  private renewedAt: number | null = null
  private lastFrameInAt: number | null = null
  private lastFrameOutAt: number | null = null
  private lastPongAt: number | null = null
  private heartbeatTimer: NodeJS.Timeout | null = null
  private reconnectTimer: NodeJS.Timeout | null = null
  private readonly now: () => number
  private readonly random: () => number
  private readonly rejects: RejectLog
  /** Why the current socket is going down, for the reconnect's reason label. */
  private downCause: { opened: boolean; httpStatus: number | null; heartbeatTimeout: boolean } = { opened: false, httpStatus: null, heartbeatTimeout: false }

  constructor(private readonly opts: LinkOptions) {
    this.now = opts.now ?? Date.now
    this.random = opts.random ?? Math.random
    this.since = this.now()
    this.rejects = new RejectLog(opts.log, this.now)
  }

  start(): void {
    if (this.state === 'stopped') return
    this.connect()
  }

  get linkState(): LinkState {
    return this.state
  }

  stats(): LinkStats {
    return {
      state: this.state,
      since: this.since,
      lastFrameInAt: this.lastFrameInAt,
      lastFrameOutAt: this.lastFrameOutAt,
      lastPongAt: this.lastPongAt,
      unacked: this.outbox.size,
      reconnects: this.reconnects,
      rejects: this.rejects.stats(),
    }
  }

  /**
   * Until when this relay may keep running its sessions without hearing from the edge: the send time of the last
   * answered heartbeat plus the lease. Null before the first welcome (nothing is held yet).
   */
  leaseValidUntil(): number | null {
    if (this.leaseMs === null || this.renewedAt === null) return null
    return this.renewedAt + this.leaseMs
  }

  /** Sends a frame now if the link is open (best effort: probe answers, draining notice). */
  send(frame: RelayFrame): boolean {
    if (this.state !== 'open' || !this.ws) return false
    // Reliable frames queued before it go first, as they did before batches (a login answer after its state change).
    if (this.flushQueued) this.flush()
    this.write(JSON.stringify(frame), frame.type)
    return true
  }

  /** Queues a reliable frame; resolves with the edge's answer, however many reconnects that takes (`link_closed` once stopped). */
  request(frame: ReliableRelayFrame, coalesceKey: string | null = null): Promise<Reply> {
    const reply = this.outbox.push(frame, coalesceKey)
    if (!this.batches) this.flush()
    else if (!this.flushQueued) {
      // Sent once the frames queued by this turn of the event loop are in (a burst read from the upstream in one
      // go), so they leave as one message; a lone frame waits only for the end of its turn.
      this.flushQueued = true
      setImmediate(() => {
        this.flushQueued = false
        this.flush()
      })
    }
    return reply
  }

  /** Resolves when every reliable frame is answered, or after `timeoutMs`. */
  drained(timeoutMs: number): Promise<boolean> {
    return this.outbox.drained(timeoutMs)
  }

  /** Closes for good (drain done, or token refused). */
  stop(code = 1000, reason = 'relay stopping'): void {
    this.state = 'stopped'
    this.since = this.now()
    this.clearTimers()
    this.outbox.close()
    const ws = this.ws
    this.ws = null
    if (ws && ws.readyState === WebSocket.OPEN) ws.close(code, reason)
    else ws?.terminate()
  }

  private setState(s: LinkState): void {
    if (this.state === 'stopped') return
    this.state = s
    this.since = this.now()
  }

  private connect(): void {
    this.setState('connecting')
    const ws = new WebSocket(this.opts.url, {
      headers: { Authorization: `Bearer ${this.opts.token}` },
      handshakeTimeout: CONNECT_TIMEOUT_MS,
      perMessageDeflate: false,
    })
    this.ws = ws
    this.downCause = { opened: false, httpStatus: null, heartbeatTimeout: false }
    ws.on('open', () => {
      this.openedAt = this.now()
      this.pings = []
      this.downCause.opened = true
      this.write(JSON.stringify(this.opts.hello()), 'hello')
    })
    ws.on('message', (data) => this.onMessage(String(data)))
    ws.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0
      res.resume()
      this.downCause.httpStatus = status
      if (status === 401 || status === 403) {
        this.opts.log.error({ status }, 'the gateway refused the relay token')
        this.stop(1000, 'token refused')
        this.opts.onRefused(`the gateway answered HTTP ${status} to the relay token`)
        return
      }
      this.opts.log.warn({ status }, 'relay connect refused')
      ws.terminate()
    })
    ws.on('close', (code, reason) => this.onClose(ws, code, reason.toString()))
    ws.on('error', (err) => this.opts.log.debug({ err: err.message }, 'relay link error'))
  }

  private onMessage(raw: string): void {
    this.lastFrameInAt = this.now()
    let frame: EdgeFrame
    try {
      frame = EdgeFrame.parse(JSON.parse(raw))
    } catch (err) {
      this.opts.meter?.frameIn('unreadable')
      this.opts.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'unreadable frame from the edge')
      return
    }
    this.opts.meter?.frameIn(frame.type)
    switch (frame.type) {
      case 'pong': {
        const sentAt = this.pings.shift()
        if (sentAt !== undefined) this.renewedAt = Math.max(this.renewedAt ?? 0, sentAt)
        this.lastPongAt = this.now()
        return
      }
      case 'welcome':
        this.leaseMs = frame.leaseMs
        this.heartbeatMs = frame.heartbeatMs
        this.batches = frame.batches === true
        // The welcome answers the hello sent at open: the leases count from there.
        this.renewedAt = Math.max(this.renewedAt ?? 0, this.openedAt)
        this.setState('open')
        this.outbox.markAllUnsent()
        this.startHeartbeat()
        this.flush()
        this.opts.log.info({ relay: frame.relayId, tenant: frame.tenantId, lease_ms: frame.leaseMs }, 'relay link open')
        return
      case 'ack':
      case 'reject':
      case 'session_data': {
        if (frame.type === 'reject') this.rejects.record(frame, this.outbox.typeOf(frame.id))
        if (frame.type === 'ack') this.opts.meter?.answered('ack', frame.ids.length)
        else if (frame.type === 'reject') this.opts.meter?.answered('reject', 1, frame.reason)
        // An answered frame renews the leases like an answered heartbeat: the edge heard from us after we sent it.
        const sentAt = this.outbox.settle(frame)
        if (sentAt !== null && this.leaseMs !== null) this.renewedAt = Math.max(this.renewedAt ?? 0, sentAt)
        if (frame.type !== 'ack') this.opts.onFrame(frame)
        this.flush()
        return
      }
      default:
        this.opts.onFrame(frame)
    }
  }

  private onClose(ws: WebSocket, code: number, reason: string): void {
    if (ws !== this.ws) return
    this.ws = null
    this.clearTimers()
    if (this.state === 'stopped') return
    if (code === CLOSE.REVOKED) {
      this.stop(1000, 'revoked')
      this.opts.onRefused('the relay token was revoked')
      return
    }
    const wasUp = this.state === 'open'
    this.setState('down')
    if (wasUp && this.now() - this.openedAt >= MIN_UPTIME_MS) this.attempt = 0
    this.attempt++
    const delay = reconnectDelayMs(this.attempt, this.random)
    const cause = this.downCause
    this.opts.meter?.linkReconnect(reconnectReason(code, cause.opened, cause.httpStatus, cause.heartbeatTimeout))
    this.opts.log.warn({ code, reason, retry_in_ms: delay }, 'relay link down')
    this.reconnectTimer = setTimeout(() => {
      this.reconnects++
      this.connect()
    }, delay)
  }

  private startHeartbeat(): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer)
    this.heartbeatTimer = setInterval(() => this.beat(), this.heartbeatMs)
  }

  private beat(): void {
    const ws = this.ws
    if (!ws || this.state !== 'open') return
    const oldest = this.pings[0]
    // Frames still arriving prove the link alive even when a busy edge is slow with its pongs.
    const quiet = this.now() - (this.lastFrameInAt ?? 0) > this.heartbeatMs * HEARTBEAT_MISSES
    if (oldest !== undefined && quiet && this.now() - oldest > this.heartbeatMs * HEARTBEAT_MISSES) {
      this.opts.log.warn({ unanswered: this.pings.length }, 'heartbeats unanswered; dropping the link')
      this.downCause.heartbeatTimeout = true
      ws.terminate()
      return
    }
    this.pings.push(this.now())
    this.write(PING_TEXT, 'ping')
    this.flush()
  }

  /** Sends what the outbox has due: new frames, and frames unanswered past the ack timeout. */
  private flush(): void {
    if (this.state !== 'open' || !this.ws) return
    const now = this.now()
    const due = this.outbox.due(now - ACK_TIMEOUT_MS, SEND_WINDOW)
    if (!this.batches) {
      for (const frame of due) {
        this.write(JSON.stringify(frame), frame.type)
        this.outbox.markSent(frame.id, now)
      }
      return
    }
    let batch: string[] = []
    let chars = 0
    const send = () => {
      if (batch.length === 0) return
      this.ws?.send(batch.length === 1 ? batch[0]! : `[${batch.join(',')}]`)
      batch = []
      chars = 0
    }
    for (const frame of due) {
      const text = JSON.stringify(frame)
      if (batch.length === RELAY_BATCH_FRAMES_MAX || (batch.length > 0 && chars + text.length > BATCH_TEXT_MAX_CHARS)) send()
      batch.push(text)
      chars += text.length + 1
      this.count(frame.type)
      this.outbox.markSent(frame.id, now)
    }
    send()
  }

  private write(text: string, type: string): void {
    this.count(type)
    this.ws?.send(text)
  }

  private count(type: string): void {
    this.lastFrameOutAt = this.now()
    this.opts.meter?.frameOut(type)
  }

  private clearTimers(): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer)
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer)
    this.heartbeatTimer = null
    this.reconnectTimer = null
  }
}
