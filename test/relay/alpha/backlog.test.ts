// The offline backlog Baileys acknowledges to alpha and then holds in its event buffer: a socket that ends before the
// buffer is released (a network drop, a stop for a deploy or a failover) must not take those messages with it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { STOP_HANDOFF_MS } from '../../../relay/handoff'
import type { FakeAlphaSocket } from '../../fixtures/alpha-socket'
import { harness, incoming, linkedStore, settle, useFakeClock, type Harness } from './harness'

beforeEach(useFakeClock)
afterEach(() => {
  vi.useRealTimers()
})

const BACKLOG = 100

/** A resumed session whose socket opened with a backlog waiting: each message acked to alpha, all still buffered. */
async function withBufferedBacklog(): Promise<{ h: Harness; socket: FakeAlphaSocket; ids: string[] }> {
  const h = await harness({ store: await linkedStore() })
  await h.connector.start()
  await settle()
  const socket = h.sockets.latest
  socket.open({ backlog: true })
  await settle()
  const messages = Array.from({ length: BACKLOG }, (_, i) => incoming({ key: { id: `OFF${i}` }, text: `backlog ${i}` }))
  await socket.receive(messages, 'append')
  await settle()
  const ids = messages.map((m) => m.key.id ?? '')
  // Baileys sent every delivery receipt, yet nothing reached the driver: the buffer waits for <ib><offline>.
  expect(socket.acked).toEqual(ids)
  expect(h.inbound).toEqual([])
  return { h, socket, ids }
}

describe('alpha backlog held in the event buffer', () => {
  it(`${BACKLOG} messages buffered when the socket ends all arrive once after the reconnect`, async () => {
    const { h, socket, ids } = await withBufferedBacklog()
    // The network drops the socket before <ib><offline>: Baileys emits the close, then destroys its buffer.
    socket.close(428, 'Connection Terminated')
    await settle()
    await vi.advanceTimersByTimeAsync(5_000)
    const next = h.sockets.latest
    expect(next).not.toBe(socket)
    // alpha sends again only what was never acknowledged: nothing.
    const unacked = ids.filter((id) => !socket.acked.includes(id))
    expect(unacked).toEqual([])
    next.open()
    await settle()
    expect(h.inbound.map((m) => m.upstreamId)).toEqual(ids)
    expect(h.lastState()).toMatchObject({ state: 'connected' })
  })

  it('hands the buffered backlog over on stop and returns only once the edge stored it', async () => {
    const { h, ids } = await withBufferedBacklog()
    let stopped = false
    const stop = h.connector.stop().then(() => (stopped = true))
    await settle()
    expect(h.inbound.map((m) => m.upstreamId)).toEqual(ids)
    expect(stopped).toBe(false)
    for (const m of h.inbound.slice(0, BACKLOG - 1)) m.onCommitted?.()
    await settle()
    expect(stopped).toBe(false)
    h.inbound.at(-1)?.onCommitted?.()
    await stop
    expect(stopped).toBe(true)
  })

  it(`stops after ${STOP_HANDOFF_MS / 1000} s even if the edge never confirms the handover`, async () => {
    const { h } = await withBufferedBacklog()
    let stopped = false
    const stop = h.connector.stop().then(() => (stopped = true))
    await settle()
    expect(h.inbound).toHaveLength(BACKLOG)
    await vi.advanceTimersByTimeAsync(STOP_HANDOFF_MS - 1_000)
    expect(stopped).toBe(false)
    await vi.advanceTimersByTimeAsync(1_000)
    await stop
    expect(stopped).toBe(true)
  })

  it('releases the backlog once alpha says the offline queue is through, without waiting for an end', async () => {
    const { h, socket, ids } = await withBufferedBacklog()
    socket.offlineDone(BACKLOG)
    await settle()
    expect(h.inbound.map((m) => m.upstreamId)).toEqual(ids)
  })
})
