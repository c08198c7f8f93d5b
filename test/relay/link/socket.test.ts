/** RelayLink against a real local WebSocket server standing in for GET /relay/connect. */
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { connectUrlFor } from '../../../relay/config'
import { RelayLink } from '../../../relay/link/socket'
import type { EdgeFrame, ReliableRelayFrame } from '../../../schema/frames'
import { startFakeEdge, type FakeEdge } from '../../fixtures/fake-edge'

const TOKEN = `rly_${'a'.repeat(40)}`
const log = pino({ level: 'silent' })
let edge: FakeEdge
let links: RelayLink[] = []

beforeEach(async () => {
  edge = await startFakeEdge({ token: TOKEN, heartbeatMs: 100, leaseMs: 2000 })
})
afterEach(async () => {
  for (const l of links) l.stop()
  links = []
  await edge.close()
})

function link(
  opts: { token?: string; sessions?: Array<{ sid: string; fence: number }>; onFrame?: (f: EdgeFrame) => void; onRefused?: (r: string) => void } = {}
) {
  const l = new RelayLink({
    url: connectUrlFor(edge.url),
    token: opts.token ?? TOKEN,
    log,
    hello: () => ({
      type: 'hello',
      protocol: 1,
      instance: 'inst-test-0001',
      version: 't',
      driver: 'sim',
      channels: ['alpha_web'],
      sessions: opts.sessions ?? [],
      draining: false,
    }),
    onFrame: opts.onFrame ?? (() => undefined),
    onRefused: opts.onRefused ?? (() => undefined),
  })
  links.push(l)
  l.start()
  return l
}

const until = async (cond: () => boolean, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met')
    await new Promise((r) => setTimeout(r, 10))
  }
}

const frame = (id: string): ReliableRelayFrame => ({ type: 'state', id, sid: 'ses_1', fence: 1, state: { state: 'connecting' }, at: 0 })

describe('RelayLink', () => {
  it('authenticates with the token, says hello with the sessions it runs, and opens on the welcome', async () => {
    const l = link({ sessions: [{ sid: 'ses_9', fence: 4 }] })
    const hello = await edge.waitFor((f) => f.type === 'hello')
    expect(hello).toMatchObject({ instance: 'inst-test-0001', sessions: [{ sid: 'ses_9', fence: 4 }] })
    await until(() => l.linkState === 'open')
  })

  it('heartbeats with the fixed ping and renews its lease from the answered ones', async () => {
    const l = link()
    await until(() => edge.pings >= 3)
    const until1 = l.leaseValidUntil()
    expect(until1).not.toBeNull()
    expect(until1!).toBeGreaterThan(Date.now() + 1500)
    expect(until1!).toBeLessThanOrEqual(Date.now() + 2000)
  })

  it('stops and reports a refused token (401)', async () => {
    let refused = ''
    const l = link({ token: `rly_${'b'.repeat(40)}`, onRefused: (r) => (refused = r) })
    await until(() => refused !== '')
    expect(refused).toContain('401')
    expect(l.linkState).toBe('stopped')
  })

  it('stops and reports a revoked token (close 4003)', async () => {
    let refused = ''
    const l = link({ onRefused: (r) => (refused = r) })
    await until(() => l.linkState === 'open')
    edge.closeAll(4003, 'relay token revoked')
    await until(() => refused !== '')
    expect(l.linkState).toBe('stopped')
  })

  it('queues reliable frames while down and resends unanswered ones after a reconnect until acked', async () => {
    edge.autoAck = false
    const l = link()
    const reply = l.request(frame('f1'))
    await edge.waitFor((f) => f.type === 'state' && f.id === 'f1')
    edge.cut()
    await until(() => l.linkState !== 'open')
    edge.autoAck = true
    await expect(reply).resolves.toEqual({ type: 'ack', ids: ['f1'] })
    expect(edge.received.filter((f) => f.type === 'state' && f.id === 'f1')).toHaveLength(2)
    expect(edge.received.filter((f) => f.type === 'hello')).toHaveLength(2)
  })

  it('terminates a link whose heartbeats go unanswered and connects again', async () => {
    const l = link()
    await until(() => l.linkState === 'open')
    edge.answerPings = false
    await until(() => edge.received.filter((f) => f.type === 'hello').length === 2, 3000)
    expect(l.stats().reconnects).toBeGreaterThanOrEqual(1)
  })

  it('hands every other edge frame to the caller', async () => {
    const got: EdgeFrame[] = []
    const l = link({ onFrame: (f) => got.push(f) })
    await until(() => l.linkState === 'open')
    edge.send({ type: 'probe', id: 'p1', sid: 'ses_1' })
    await until(() => got.length === 1)
    expect(got[0]).toEqual({ type: 'probe', id: 'p1', sid: 'ses_1' })
  })
})
