/**
 * RelayLink's batched messages, against the fake edge whose welcome says it takes them (as the real edge's does):
 * the frames queued in one turn of the event loop leave as one message in queue order, each frame is still settled
 * by its own answer, and what a cut link left unanswered goes again, once, in order.
 */
import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { connectUrlFor } from '../../../relay/config'
import { BATCH_TEXT_MAX_CHARS } from '../../../relay/link/backoff'
import { RelayLink } from '../../../relay/link/socket'
import { RELAY_BATCH_FRAMES_MAX, type ReliableRelayFrame } from '../../../schema/frames'
import { startFakeEdge, type FakeEdge } from '../../fixtures/fake-edge'

const TOKEN = `rly_${'c'.repeat(40)}`
const log = pino({ level: 'silent' })
let edge: FakeEdge
let links: RelayLink[] = []

afterEach(async () => {
  for (const l of links) l.stop()
  links = []
  await edge.close()
})

async function open(batches: boolean): Promise<RelayLink> {
  edge = await startFakeEdge({ token: TOKEN, heartbeatMs: 10_000, leaseMs: 20_000, batches })
  const l = new RelayLink({
    url: connectUrlFor(edge.url),
    token: TOKEN,
    log,
    hello: () => ({
      type: 'hello',
      protocol: 1,
      instance: 'inst-test-batch',
      version: 't',
      driver: 'sim',
      channels: ['alpha_web'],
      sessions: [],
      draining: false,
    }),
    onFrame: () => undefined,
    onRefused: () => undefined,
  })
  links.push(l)
  l.start()
  await until(() => l.linkState === 'open')
  return l
}

const until = async (cond: () => boolean, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met')
    await new Promise((r) => setTimeout(r, 5))
  }
}

const inbound = (id: string, text = id): ReliableRelayFrame => ({
  type: 'inbound',
  id,
  sid: 'ses_1',
  fence: 1,
  message: { upstreamId: `up-${id}`, from: { id: 'p1', phone: null, lid: null, name: null }, text, media: null, sentAt: 0 },
})
const ids = (n: number, prefix = 'f') => Array.from({ length: n }, (_, i) => `${prefix}${i}`)
const inboundIds = () => edge.received.flatMap((f) => (f.type === 'inbound' ? [f.id] : []))

describe('RelayLink batches', () => {
  it('sends the frames queued in one turn as one message, in queue order, and settles each by its own ack', async () => {
    const l = await open(true)
    const replies = ids(40).map((id) => l.request(inbound(id)))
    const answers = await Promise.all(replies)
    expect(answers.map((a) => a.type === 'ack' && a.ids)).toEqual(ids(40).map((id) => [id]))
    expect(edge.messages.filter((m) => m[0] === 'inbound')).toEqual([Array(40).fill('inbound')])
    expect(inboundIds()).toEqual(ids(40))
    expect(l.stats().unacked).toBe(0)
  })

  it('keeps a best-effort frame behind the reliable frames queued before it in the same turn', async () => {
    const l = await open(true)
    const replies = ids(3).map((id) => l.request(inbound(id)))
    l.send({ type: 'probe_result', id: 'p1', sid: 'ses_1', state: null })
    await Promise.all(replies)
    expect(edge.received.filter((f) => f.type !== 'hello').map((f) => ('id' in f ? f.id : f.type))).toEqual([...ids(3), 'p1'])
  })

  it('sends one frame per message to an edge whose welcome does not offer batches', async () => {
    const l = await open(false)
    await Promise.all(ids(5).map((id) => l.request(inbound(id))))
    expect(edge.messages.filter((m) => m[0] === 'inbound')).toEqual(Array(5).fill(['inbound']))
  })

  it('keeps each message within the frame and text budgets', async () => {
    const l = await open(true)
    const big = 'x'.repeat(Math.floor(BATCH_TEXT_MAX_CHARS / 4))
    await Promise.all([...ids(RELAY_BATCH_FRAMES_MAX + 10).map((id) => l.request(inbound(id))), ...ids(4, 'big').map((id) => l.request(inbound(id, big)))])
    const sizes = edge.messages.filter((m) => m[0] === 'inbound').map((m) => m.length)
    // A full message of small frames; the 10 left and three large texts fill the next; the fourth large one goes alone.
    expect(sizes).toEqual([RELAY_BATCH_FRAMES_MAX, 13, 1])
    expect(inboundIds()).toEqual([...ids(RELAY_BATCH_FRAMES_MAX + 10), ...ids(4, 'big')])
  })

  it('sends again, once and in order, the frames of a batch a cut link left unanswered, and only those', async () => {
    const l = await open(true)
    edge.autoAck = false
    const replies = ids(6).map((id) => l.request(inbound(id)))
    await until(() => inboundIds().length === 6)
    // The edge stored and answered the first half of the batch before the link went down.
    edge.send({ type: 'ack', ids: ['f0', 'f1', 'f2'] })
    await expect(Promise.all(replies.slice(0, 3))).resolves.toHaveLength(3)
    edge.cut()
    await until(() => l.linkState !== 'open')
    edge.autoAck = true
    const rest = await Promise.all(replies.slice(3))
    expect(rest.map((a) => a.type === 'ack' && a.ids)).toEqual([['f3'], ['f4'], ['f5']])
    expect(inboundIds()).toEqual([...ids(6), 'f3', 'f4', 'f5'])
    expect(l.stats().unacked).toBe(0)
  })
})
