/**
 * A scripted relay for the workerd tests: opens a real WebSocket to GET /relay/connect through the Worker, records
 * every frame the edge sends (parsed with the shared protocol) and lets a test answer like a relay would.
 */
import { exports } from 'cloudflare:workers'
import { afterEach, expect, vi } from 'vitest'
import { EdgeFrame, FRAME_PROTOCOL_VERSION, type FrameOf, type RelayFrame } from '../../schema/frames'
import { admin, body, call, newTenant, ORIGIN } from './helpers'

type EdgeType = EdgeFrame['type']

export async function issueRelay(tenantId?: string): Promise<{ id: string; token: string }> {
  const res = await admin('/admin/relays', { method: 'POST', json: tenantId ? { tenant_id: tenantId } : {} })
  if (res.status !== 201) throw new Error(`issue relay: ${res.status} ${await res.text()}`)
  return body<{ id: string; token: string }>(res)
}

export function relayConnect(token: string | null, headers: Record<string, string> = { Upgrade: 'websocket' }): Promise<Response> {
  const h = new Headers(headers)
  if (token !== null) h.set('Authorization', `Bearer ${token}`)
  return exports.default.fetch(new Request(`${ORIGIN}/relay/connect`, { headers: h }))
}

let phoneSeq = 0

/** A number no other test uses: `prefix` keeps test files apart (their D1 is separate, the clock is shared). */
export function uniquePhone(prefix: string): string {
  return `+${prefix}${String(Date.now() % 100000).padStart(5, '0')}${String(phoneSeq++ % 100).padStart(2, '0')}`
}

/** Relays a test opens, closed (and the clock given back) after each test of the file that calls this. */
export function closeRelaysAfterEach(): FakeRelay[] {
  const relays: FakeRelay[] = []
  afterEach(() => {
    vi.useRealTimers()
    for (const r of relays.splice(0)) r.close()
  })
  return relays
}

/**
 * A new tenant with an alpha number assigned to a fresh fake relay that reported it connected: where the tests of
 * relay frames start. The relay joins `relays` (closed after the test); `stateAnswer` is the edge's answer to the state.
 */
export async function linkedAlphaAccount(relays: FakeRelay[], phonePrefix: string) {
  const t = await newTenant()
  const { token } = await issueRelay(t.tenantId)
  const relay = await FakeRelay.open(token)
  relays.push(relay)
  const phone = uniquePhone(phonePrefix)
  expect((await call('/v1/channels/alpha-web/connections', { method: 'POST', key: t.key, json: { phone_number: phone } })).status).toBe(200)
  const assign = await relay.next('assign', (a) => a.account.accountId === phone)
  const stateAnswer = await relay.state(assign, { state: 'connected', identifier: phone, upstreamUserId: null })
  return { t, relay, phone, assign, token, stateAnswer }
}

let instanceSeq = 0

export class FakeRelay {
  readonly frames: EdgeFrame[] = []
  readonly instance: string
  private waiters = new Set<() => void>()
  closed: { code: number; reason: string } | null = null
  private frameId = 0

  private constructor(
    readonly ws: WebSocket,
    instance?: string
  ) {
    this.instance = instance ?? `inst-test-${Date.now().toString(36)}-${instanceSeq++}`
    ws.addEventListener('message', (e) => {
      this.frames.push(EdgeFrame.parse(JSON.parse(String(e.data))))
      for (const w of [...this.waiters]) w()
    })
    ws.addEventListener('close', (e) => {
      this.closed = { code: e.code, reason: e.reason }
      for (const w of [...this.waiters]) w()
    })
  }

  static async open(
    token: string,
    opts: { instance?: string; sessions?: Array<{ sid: string; fence: number }>; hello?: boolean; channels?: Array<'alpha_web' | 'beta'> } = {}
  ): Promise<FakeRelay> {
    const res = await relayConnect(token)
    if (res.status !== 101 || !res.webSocket) throw new Error(`relay connect: ${res.status} ${await res.text()}`)
    res.webSocket.accept()
    const relay = new FakeRelay(res.webSocket, opts.instance)
    if (opts.hello !== false) {
      relay.send({
        type: 'hello',
        protocol: FRAME_PROTOCOL_VERSION,
        instance: relay.instance,
        version: 'test',
        driver: 'sim',
        channels: opts.channels ?? ['alpha_web'],
        sessions: opts.sessions ?? [],
        draining: false,
      })
      await relay.next('welcome')
    }
    return relay
  }

  send(frame: RelayFrame): void {
    this.ws.send(JSON.stringify(frame))
  }

  id(): string {
    return `f${++this.frameId}`
  }

  /** The first frame of `type` matching `match` not yet taken, waiting up to `timeoutMs`. */
  next<T extends EdgeType>(type: T, match: (f: FrameOf<T>) => boolean = () => true, timeoutMs = 5000): Promise<FrameOf<T>> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const i = this.frames.findIndex((f) => f.type === type && match(f as FrameOf<T>))
        if (i >= 0) {
          const [f] = this.frames.splice(i, 1)
          done()
          resolve(f as FrameOf<T>)
        } else if (this.closed) {
          done()
          reject(new Error(`link closed (${this.closed.code}) while waiting for ${type}`))
        }
      }
      const timer = setTimeout(
        () => (done(), reject(new Error(`no ${type} frame within ${timeoutMs} ms; have ${this.frames.map((f) => f.type).join(', ')}`))),
        timeoutMs
      )
      const done = () => (clearTimeout(timer), this.waiters.delete(check))
      this.waiters.add(check)
      check()
    })
  }

  /** Sends a reliable frame and waits for its answer: an ack naming it (acks may name several), a reject or session data. */
  request(frame: RelayFrame & { id: string }): Promise<FrameOf<'ack'> | FrameOf<'reject'> | FrameOf<'session_data'>> {
    this.send(frame)
    return new Promise((resolve, reject) => {
      const check = () => {
        const answer = this.frames.find(
          (f) => (f.type === 'ack' && f.ids.includes(frame.id)) || ((f.type === 'reject' || f.type === 'session_data') && f.id === frame.id)
        )
        if (answer && (answer.type === 'ack' || answer.type === 'reject' || answer.type === 'session_data')) done(), resolve(answer)
        else if (this.closed) done(), reject(new Error(`link closed (${this.closed.code}) before ${frame.type} ${frame.id} was answered`))
      }
      const timer = setTimeout(() => (done(), reject(new Error(`${frame.type} ${frame.id} not answered within 5000 ms`))), 5000)
      const done = () => (clearTimeout(timer), this.waiters.delete(check))
      this.waiters.add(check)
      check()
    })
  }

  /** The session states a relay reports while it runs a session. */
  state(a: FrameOf<'assign'>, state: FrameOf<'state'>['state']) {
    return this.request({ type: 'state', id: this.id(), sid: a.sid, fence: a.fence, state, at: Date.now() })
  }

  waitClosed(timeoutMs = 5000): Promise<{ code: number; reason: string }> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.closed) done(), resolve(this.closed)
      }
      const timer = setTimeout(() => (done(), reject(new Error('link not closed'))), timeoutMs)
      const done = () => (clearTimeout(timer), this.waiters.delete(check))
      this.waiters.add(check)
      check()
    })
  }

  close(code = 1000): void {
    try {
      this.ws.close(code, 'test done')
    } catch {
      // already closed
    }
  }
}
