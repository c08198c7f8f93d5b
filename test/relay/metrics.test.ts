/**
 * GET /metrics on the relay's health port: a whole relay in sim mode (the in-process simulated network and the sim
 * driver) over a real WebSocket to the fake edge. After a link, a send, an inbound message with a photo and a cut of
 * the link, every metric docs/relay.md names is there with the values those events leave.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RelayMetrics } from '../../relay/metrics'
import { startRelay, type Relay } from '../../relay/relay'
import type { FrameOf, RelayFrame } from '../../schema/frames'
import { startFakeEdge, type FakeEdge } from '../fixtures/fake-edge'

const TOKEN = `rly_${'q'.repeat(40)}`
const PHONE = '+15550007001'
const SID = 'ses_metrics'

let edge: FakeEdge
let relay: Relay

beforeAll(async () => {
  edge = await startFakeEdge({ token: TOKEN, heartbeatMs: 200 })
  relay = await startRelay({
    connectUrl: `${edge.url.replace(/^http/, 'ws')}/relay/connect`,
    token: TOKEN,
    sessionKey: 'k'.repeat(40),
    driver: 'sim',
    healthHost: '127.0.0.1',
    healthPort: 0,
    simUrl: null,
    drainTimeoutMs: 1000,
    mediaMaxBytes: 1 << 20,
    logLevel: 'silent',
    beta: null,
  })
  await edge.waitFor((f) => f.type === 'hello')
})
afterAll(async () => {
  await relay?.drain()
  await edge?.close()
})

async function sim(path: string, body: unknown = {}): Promise<void> {
  const res = await fetch(`${relay.simUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  expect(res.status, await res.clone().text()).toBeLessThan(300)
}

const stateFrame = (state: string) => (f: RelayFrame) => f.type === 'state' && f.sid === SID && f.state.state === state

async function scrape(): Promise<{ text: string; contentType: string | null; value(name: string, labels?: Record<string, string>): number }> {
  const res = await fetch(relay.healthUrl!.replace(/\/healthz$/, '/metrics'))
  expect(res.status).toBe(200)
  const text = await res.text()
  const value = (name: string, labels: Record<string, string> = {}) => {
    let sum = 0
    for (const line of text.split('\n')) {
      const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line)
      if (!m || m[1] !== name) continue
      const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]))
      if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3])
    }
    return sum
  }
  return { text, contentType: res.headers.get('content-type'), value }
}

describe('GET /metrics on the relay', () => {
  it('counts sessions, frames, acks, sends, inbound latency, uploads and reconnects after a real exchange', async () => {
    const assign: FrameOf<'assign'> = {
      type: 'assign',
      sid: SID,
      fence: 1,
      account: { tenantId: 'ten_1', accountId: PHONE, channel: 'alpha_web', phone: PHONE },
      linkMethod: 'qr',
      forceNew: true,
      importContacts: false,
    }
    edge.send(assign)
    await edge.waitFor(stateFrame('qr_pending'))
    const waiting = await scrape()
    expect(waiting.value('relay_sessions', { channel: 'alpha_web', state: 'qr_pending' })).toBe(1)

    // A send before the link is made is held by the session: a queued send.
    const message = { messageId: 'msg_1', to: { phone: '+447700900111', peerId: null }, text: 'Hello', mediaUrl: null }
    edge.send({ type: 'send', sid: SID, fence: 1, message, expiresAt: Date.now() + 60_000 })
    await expect.poll(async () => (await scrape()).value('relay_queued_sends', { channel: 'alpha_web' })).toBe(1)

    await sim(`/alpha/${encodeURIComponent(PHONE)}/link`)
    await edge.waitFor(stateFrame('connected'))
    await edge.waitFor((f) => f.type === 'sent' && f.messageId === 'msg_1')

    const photo = Buffer.alloc(3000, 7)
    await sim(`/alpha/${encodeURIComponent(PHONE)}/inbound`, {
      from: '+447700900111',
      text: 'A photo',
      media: { content_type: 'image/jpeg', file_name: 'p.jpg', data_base64: photo.toString('base64') },
    })
    await edge.waitFor((f) => f.type === 'inbound' && f.message.text === 'A photo')
    expect([...edge.media.values()].map((b) => b.length)).toEqual([photo.length])

    // A cut link comes back by itself; the reconnect is counted with its reason.
    edge.cut()
    await edge.waitFor((f) => f.type === 'hello' && f.sessions.length === 1, 10_000)
    // Frames the cut left unanswered go again after the new hello; the outbox empties once the edge acks them.
    await expect.poll(async () => (await scrape()).value('relay_unanswered_frames')).toBe(0)

    const m = await scrape()
    expect(m.contentType).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(m.value('relay_info', { driver: 'sim' })).toBe(1)
    expect(m.value('relay_sessions', { channel: 'alpha_web', state: 'connected' })).toBe(1)
    expect(m.value('relay_queued_sends')).toBe(0)
    expect(m.value('relay_session_problems')).toBe(0)
    expect(m.value('relay_frames_total', { direction: 'out', type: 'inbound' })).toBe(1)
    expect(m.value('relay_frames_total', { direction: 'out', type: 'sent' })).toBe(1)
    expect(m.value('relay_frames_total', { direction: 'out', type: 'hello' })).toBe(2)
    expect(m.value('relay_frames_total', { direction: 'in', type: 'send' })).toBe(1)
    expect(m.value('relay_frames_total', { direction: 'in', type: 'assign' })).toBe(1)
    expect(m.value('relay_frames_total', { direction: 'in', type: 'ack' })).toBeGreaterThanOrEqual(3)
    expect(m.value('relay_acks_total', { direction: 'in' })).toBeGreaterThanOrEqual(4) // states, sent, inbound, session writes
    expect(m.value('relay_acks_total', { direction: 'out' })).toBe(1) // the inbound message, acknowledged to the network
    expect(m.value('relay_unanswered_frames')).toBe(0)
    expect(m.value('relay_link_state', { state: 'open' })).toBe(1)
    expect(m.value('relay_link_reconnects_total', { reason: 'connection_lost' })).toBe(1)
    expect(m.value('relay_session_state_changes_total', { channel: 'alpha_web', state: 'connected' })).toBe(1)
    expect(m.value('relay_send_seconds_count', { channel: 'alpha_web', outcome: 'sent' })).toBe(1)
    expect(m.value('relay_inbound_seconds_count', { channel: 'alpha_web' })).toBe(1)
    expect(m.value('relay_inbound_seconds_sum', { channel: 'alpha_web' })).toBeGreaterThan(0)
    expect(m.value('relay_media_upload_bytes_total', { channel: 'alpha_web', kind: 'image' })).toBe(photo.length)
    expect(m.value('relay_media_uploads_total', { channel: 'alpha_web', kind: 'image' })).toBe(1)
    expect(m.value('process_resident_memory_bytes')).toBeGreaterThan(0)
    expect(m.value('nodejs_heap_size_used_bytes')).toBeGreaterThan(0)
    expect(m.text).toMatch(/^nodejs_eventloop_lag_seconds \S+$/m)
    expect(m.text).toMatch(/^nodejs_eventloop_lag_p99_seconds \S+$/m)
    // Nothing names an account or a contact.
    expect(m.text).not.toContain(PHONE)
    expect(m.text).not.toContain('447700900111')

    // A banned number: the session reports its problem, counted by problem.
    await sim(`/alpha/${encodeURIComponent(PHONE)}/ban`)
    await edge.waitFor((f) => f.type === 'state' && f.sid === SID && 'problem' in f.state)
    await expect.poll(async () => (await scrape()).value('relay_session_problems', { channel: 'alpha_web' })).toBe(1)
  })

  it('keeps two relays in one process apart (each has its own registry)', async () => {
    const a = new RelayMetrics({ instance: 'a', driver: 'sim', version: 't' })
    const b = new RelayMetrics({ instance: 'b', driver: 'sim', version: 't' })
    a.frameIn('ack')
    expect((await a.render()).body).toMatch(/^relay_frames_total\{direction="in",type="ack"\} 1$/m)
    expect((await b.render()).body).not.toMatch(/^relay_frames_total\{/m)
  })
})
