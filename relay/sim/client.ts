/**
 * The sim driver's connector: one WebSocket to the simulated network per session, like a real linked device.
 * It resumes with the credentials kept in the session store (no new QR after a restart or a failover), links a new
 * device otherwise, reconnects with backoff when the network drops, and stops for good on logout, ban, replacement
 * or a passkey demand, reporting each as a named problem.
 *
 * It receives as the alpha driver does on Baileys: each message and receipt is acknowledged to the network as it
 * arrives (Baileys' delivery receipt goes before the message is emitted), a resumed device holds what arrives offline
 * in a buffer until the network says the backlog is through (or BUFFER_TIMEOUT_MS, a live message, a close or a stop
 * releases it), and a stop waits until the edge stored what was acknowledged. So the simulator takes the same loss
 * paths as the network, not kinder ones: a relay process killed after an acknowledgement loses that message.
 */
import { WebSocket } from 'ws'
import {
  PermanentSendError,
  type ActionOutcome,
  type ChatAction,
  type Connector,
  type ConnectorEvents,
  type ConnectorOptions,
  type OutboundMessage,
  type SessionState,
} from '../connector'
import { makeHandoff, STOP_HANDOFF_MS } from '../handoff'
import { MAX_RECONNECT_MS, MIN_RECONNECT_MS, reconnectDelayMs } from '../link/backoff'
import { simDeviceUrl } from './config'
import { SimActions } from './actions'
import { toNetSend } from './convert'
import { handleEvent } from './handle-events'
import { Device, NetMessage, ServerMsg, type ClientMsg } from './network/protocol'
import { fromNetMessage } from './convert'
import type { SimSession } from './session'
import { closeOutcome, PROBLEM_MESSAGES } from './state'

const CREDS_KEY = 'creds'
/** Media messages acknowledged but not yet stored at the edge, one entry each (as alpha's relay/media/<id>). */
const PENDING_PREFIX = 'pending/'
/** A send the network does not answer within this time counts as failed for now (the edge retries it). */
const SEND_TIMEOUT_MS = 15_000
/** Reconnects failing this many times in a row are reported as `unresponsive` (retries go on). */
const UNRESPONSIVE_AFTER_FAILURES = 5
/** Baileys flushes its event buffer on its own after 30 s (event-buffer.js). */
export const BUFFER_TIMEOUT_MS = 30_000

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}

export class SimClient implements Connector, SimSession {
  pairing = { requested: false }
  readonly knownPeers = new Set<string>()
  readonly actions = new SimActions()
  private ws: WebSocket | null = null
  private creds: Device | null = null
  private stopped = false
  private open = false
  private failures = 0
  private unresponsive = false
  private reconnectTimer: NodeJS.Timeout | null = null
  private readonly sends = new Map<string, { resolve: () => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>()
  private readonly handoff: ReturnType<typeof makeHandoff>
  /** Deliveries held while a resumed device's offline backlog drains (null: not buffering). */
  private buffered: Array<() => void> | null = null
  private bufferTimer: NodeJS.Timeout | null = null
  /** Network messages are handled one after the other, in arrival order, as Baileys' message mutex does. */
  private handling: Promise<void> = Promise.resolve()

  constructor(readonly opts: ConnectorOptions) {
    this.handoff = makeHandoff(opts.events)
  }

  get events(): ConnectorEvents {
    return this.handoff.events
  }

  async start(): Promise<void> {
    if (this.opts.forceNew) await this.opts.store.clear()
    const entries = await this.opts.store.loadAll()
    const raw = entries.get(CREDS_KEY)
    this.creds = raw ? Device.parse(JSON.parse(raw)) : null
    // Media messages a previous run acknowledged and never saw stored are handed over again (the edge de-duplicates).
    for (const [name, text] of entries) {
      if (!name.startsWith(PENDING_PREFIX)) continue
      const kept = NetMessage.safeParse(parseJson(text))
      if (!kept.success) continue
      this.events.inbound({ ...fromNetMessage(kept.data), onCommitted: () => void this.opts.store.write(new Map([[name, null]])).catch(() => undefined) })
    }
    this.connect()
  }

  async send(m: OutboundMessage): Promise<{ upstreamId: string }> {
    const msg = toNetSend(m)
    if (!this.open || !this.ws) throw new Error('the session is not connected')
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => (this.sends.delete(msg.id), reject(new Error('the network did not confirm the send'))), SEND_TIMEOUT_MS)
      this.sends.set(msg.id, { resolve, reject, timer })
      this.transmit(msg)
    })
    return { upstreamId: msg.id }
  }

  act(a: ChatAction): Promise<ActionOutcome> {
    return this.actions.run(a, (msg) => {
      if (!this.open || this.ws?.readyState !== WebSocket.OPEN) return false
      this.ws.send(JSON.stringify(msg))
      return true
    })
  }

  async logout(): Promise<void> {
    this.stopped = true
    if (this.open) this.transmit({ t: 'logout' })
    this.close()
    await this.opts.store.clear()
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.close()
    // What the device acknowledged reaches the edge before the session may resume elsewhere.
    if (!(await this.handoff.settled(STOP_HANDOFF_MS))) this.opts.log.warn('sim: stopped before the edge stored every acknowledged message')
  }

  // ── SimSession ───────────────────────────────────────────────────────────────────────────────────────────────

  transmit(msg: ClientMsg): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg))
  }

  async keep(msg: Extract<ServerMsg, { t: 'message' }>): Promise<() => void> {
    const name = `${PENDING_PREFIX}${msg.id}`
    await this.opts.store
      .write(new Map([[name, JSON.stringify(msg)]]))
      .catch((err: unknown) => this.opts.log.warn({ err: String(err) }, 'sim: keeping a media message failed'))
    return () => void this.opts.store.write(new Map([[name, null]])).catch(() => undefined)
  }

  receive(offline: boolean, deliver: () => void): void {
    if (!this.buffered) {
      deliver()
      return
    }
    this.buffered.push(deliver)
    // A live message releases the backlog held before it (Baileys' processNodeWithBuffer flushes the buffer).
    if (!offline) this.flush()
  }

  offlineDone(): void {
    this.flush()
  }

  emit(s: SessionState): void {
    if (!this.stopped || s.state === 'disconnected' || s.state === 'restricted') this.opts.events.state(s)
  }

  async saveCreds(device: Device): Promise<void> {
    this.creds = device
    await this.opts.store.write(new Map([[CREDS_KEY, JSON.stringify(device)]]))
  }

  markOpen(): void {
    this.open = true
    this.failures = 0
    this.unresponsive = false
  }

  settleSend(id: string, error: { code: number; reason: string } | null): void {
    const s = this.sends.get(id)
    if (!s) return
    this.sends.delete(id)
    clearTimeout(s.timer)
    if (!error) s.resolve()
    // 463: the account may not start chats (restricted); 400: no such recipient. Neither gets better by retrying.
    else if (error.code === 463 || error.code === 400) s.reject(new PermanentSendError(error.reason, error.code))
    else s.reject(new Error(error.reason))
  }

  giveUp(): void {
    this.stopped = true
    this.close()
  }

  // ─────────────────────────────────────────────────────────────────────────────────────────────────────────────

  private connect(): void {
    if (this.stopped) return
    if (this.creds) {
      this.emit({ state: 'connecting' })
      // A linked device buffers until its offline backlog is through, as Baileys does for a logged-in socket.
      this.flush()
      this.buffered = []
      this.bufferTimer = setTimeout(() => this.flush(), BUFFER_TIMEOUT_MS)
    }
    const ws = new WebSocket(simDeviceUrl(), { perMessageDeflate: false })
    this.ws = ws
    ws.on('open', () => this.transmit({ t: 'login', phone: this.opts.phone, device: this.creds }))
    ws.on('message', (data) => {
      let msg: ServerMsg
      try {
        msg = ServerMsg.parse(JSON.parse(String(data)))
      } catch {
        this.opts.log.warn('unreadable message from the simulated network')
        return
      }
      this.handling = this.handling.then(() => handleEvent(this, msg)).catch((err: unknown) => this.opts.log.error({ err: String(err) }, 'sim event failed'))
    })
    ws.on('close', (code) => this.onClose(ws, code))
    ws.on('error', (err) => this.opts.log.debug({ err: err.message }, 'sim network socket error'))
  }

  /** Releases the buffer: whatever it holds was acknowledged to the network, so it is handed over, never dropped. */
  private flush(): void {
    if (this.bufferTimer) clearTimeout(this.bufferTimer)
    this.bufferTimer = null
    const held = this.buffered ?? []
    this.buffered = null
    for (const deliver of held) deliver()
  }

  private onClose(ws: WebSocket, code: number): void {
    if (ws !== this.ws) return
    this.flush()
    this.ws = null
    this.open = false
    this.actions.closeAll()
    for (const [id, s] of this.sends) {
      clearTimeout(s.timer)
      s.reject(new Error('the connection closed before the send was confirmed'))
      this.sends.delete(id)
    }
    if (this.stopped) return
    const outcome = closeOutcome(code, this.creds !== null)
    switch (outcome.kind) {
      case 'terminal':
        this.stopped = true
        if (outcome.wipe) {
          this.creds = null
          void this.opts.store.clear().catch((err: unknown) => this.opts.log.warn({ err: String(err) }, 'session wipe failed'))
        }
        this.opts.events.state(
          outcome.state === 'restricted'
            ? { state: 'restricted', problem: outcome.problem, message: PROBLEM_MESSAGES[outcome.problem], until: null }
            : { state: 'disconnected', problem: outcome.problem, message: PROBLEM_MESSAGES[outcome.problem] }
        )
        return
      case 'link_expired':
        this.stopped = true
        this.opts.events.state({ state: 'disconnected', problem: 'link_expired', message: PROBLEM_MESSAGES.link_expired })
        return
      case 'restart':
        this.connect()
        return
      case 'reconnect': {
        this.failures++
        if (this.failures >= UNRESPONSIVE_AFTER_FAILURES && !this.unresponsive) {
          this.unresponsive = true
          this.opts.events.state({ state: 'disconnected', problem: 'unresponsive', message: PROBLEM_MESSAGES.unresponsive })
        }
        const delay = Math.min(MAX_RECONNECT_MS, Math.max(MIN_RECONNECT_MS, reconnectDelayMs(this.failures)))
        this.reconnectTimer = setTimeout(() => this.connect(), delay)
        return
      }
    }
  }

  private close(): void {
    this.flush()
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer)
    const ws = this.ws
    this.ws = null
    this.open = false
    if (ws && (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING)) ws.close(1000, 'session stopped')
  }
}
