/**
 * The simulator's beta client: what the real beta driver (relay/beta/client.ts) calls in place of GramJS's
 * TelegramClient, over one WebSocket to the simulated network. Requests and answers are real TL (beta-wire.ts);
 * errors come back as GramJS raises them (RPCMessageToError: FloodWaitError and the rest); pushed updates reach
 * `onUpdate` the way GramJS hands them to a Raw handler (each update of a container, with its users as `_entities`).
 * The session string names the auth key on the network, so a relay restart resumes without a login. A dropped
 * socket reopens on the same key, as GramJS reconnects.
 */
import { Api, errors } from 'telegram'
import type { CustomFile } from 'telegram/client/uploads'
import { WebSocket } from 'ws'
import type { BetaClient, FileSource } from '../beta/socket'
import { dispatchUpdates, downloadParts, sendText, sendUpload } from './beta-calls'
import { simDeviceUrl } from './config'
import { decodeResult, decodeUpdates, encodeTl } from './network/beta-wire'
import { ServerMsg, type ClientMsg } from './network/protocol'

const SESSION_PREFIX = 'sim1:'
/** A request the network does not answer within this long fails (transient), as a GramJS timeout would. */
const CALL_TIMEOUT_MS = 30_000
const REOPEN_MS = 1_000

type Pending = { request: Api.AnyRequest | null; resolve(v: unknown): void; reject(e: Error): void; timer: NodeJS.Timeout }

export class SimBetaClient implements BetaClient {
  private ws: WebSocket | null = null
  private key: string | null
  private destroyed = false
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
  private readonly handlers: Array<(u: unknown) => void> = []
  private reopenTimer: NodeJS.Timeout | null = null

  constructor(
    session: string,
    private readonly phone: string
  ) {
    this.key = session.startsWith(SESSION_PREFIX) ? session.slice(SESSION_PREFIX.length) : null
    if (session && !this.key) throw new Error('sim beta: not a session the simulator wrote')
  }

  connect(): Promise<void> {
    if (this.destroyed) return Promise.reject(new Error('sim beta: connect after destroy'))
    return new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(simDeviceUrl(), { perMessageDeflate: false })
      this.ws = ws
      let opened = false
      ws.on('open', () => this.transmit({ t: 'beta_open', key: this.key, phone: this.phone }))
      ws.on('message', (data) => {
        const parsed = ServerMsg.safeParse(safeJson(String(data)))
        if (!parsed.success) return
        const msg = parsed.data
        if (msg.t === 'beta_opened') {
          this.key = msg.key
          opened = true
          return resolve()
        }
        this.onServer(msg)
      })
      ws.on('error', (err) => {
        if (!opened) reject(err)
      })
      ws.on('close', () => {
        if (ws !== this.ws) return
        this.ws = null
        for (const [id, p] of this.pending) {
          clearTimeout(p.timer)
          p.reject(new Error('sim beta: the connection closed'))
          this.pending.delete(id)
        }
        if (!opened) return reject(new Error('sim beta: the network closed the connection'))
        if (!this.destroyed) this.reopenTimer = setTimeout(() => void this.connect().catch(() => undefined), REOPEN_MS)
      })
    })
  }

  async destroy(): Promise<void> {
    this.destroyed = true
    if (this.reopenTimer) clearTimeout(this.reopenTimer)
    const ws = this.ws
    this.ws = null
    ws?.close(1000, 'client destroyed')
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer)
      p.reject(new Error('sim beta: the client was destroyed'))
      this.pending.delete(id)
    }
  }

  invoke(request: Api.AnyRequest, ref?: string | null): Promise<unknown> {
    return this.call(request, (id) => ({ t: 'beta_invoke', id, body: encodeTl(request), ref: ref ?? null }))
  }

  async switchDC(dcId: number): Promise<void> {
    await this.call(null, (id) => ({ t: 'beta_dc', id, dc: dcId }))
  }

  onUpdate(handler: (update: unknown) => void): void {
    this.handlers.push(handler)
  }

  sendMessage(peer: Api.InputPeerUser, text: string, ref?: string): Promise<Api.Message> {
    return sendText((r, x) => this.invoke(r, x), peer, text, ref ?? null)
  }

  sendFile(peer: Api.InputPeerUser, file: CustomFile, caption: string, ref?: string): Promise<Api.Message> {
    return sendUpload((r, x) => this.invoke(r, x), peer, file, caption, ref ?? null)
  }

  downloadMedia(source: FileSource, offset: number): AsyncIterable<Buffer> {
    return downloadParts((r, x) => this.invoke(r, x), source, offset)
  }

  saveSession(): string {
    return this.key ? `${SESSION_PREFIX}${this.key}` : ''
  }

  // ─────────────────────────────────────────────────────────────────────────────────────────────────────────────

  private transmit(msg: ClientMsg): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg))
  }

  private call(request: Api.AnyRequest | null, frame: (id: number) => ClientMsg): Promise<unknown> {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return Promise.reject(new Error('sim beta: not connected'))
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => (this.pending.delete(id), reject(new Error('sim beta: the request timed out'))), CALL_TIMEOUT_MS)
      this.pending.set(id, { request, resolve, reject, timer })
      this.transmit(frame(id))
    })
  }

  private onServer(msg: ServerMsg): void {
    if (msg.t === 'beta_update') {
      dispatchUpdates(decodeUpdates(msg.body), (u) => {
        for (const h of this.handlers) h(u)
      })
      return
    }
    if (msg.t !== 'beta_result' && msg.t !== 'beta_error') return
    const p = this.pending.get(msg.id)
    if (!p) return
    this.pending.delete(msg.id)
    clearTimeout(p.timer)
    if (msg.t === 'beta_error') {
      const request = p.request ?? new Api.help.GetConfig()
      const err: unknown = errors.RPCMessageToError(new Api.RpcError({ errorCode: msg.code, errorMessage: msg.message }), request)
      p.reject(err instanceof Error ? err : new errors.RPCError(msg.message, request, msg.code))
      return
    }
    try {
      p.resolve(p.request ? decodeResult(p.request, msg.body) : undefined)
    } catch (err) {
      p.reject(err instanceof Error ? err : new Error(String(err)))
    }
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}
