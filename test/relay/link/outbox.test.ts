import { describe, expect, it } from 'vitest'
import { Outbox } from '../../../relay/link/outbox'
import type { ReliableRelayFrame } from '../../../schema/frames'

const inbound = (id: string): ReliableRelayFrame => ({
  type: 'inbound',
  id,
  sid: 'ses_1',
  fence: 1,
  message: { upstreamId: id, from: { id: 'p', phone: null, lid: null, name: null }, text: 't', media: null, sentAt: 0 },
})
const state = (id: string, s: 'connecting' | 'connected'): ReliableRelayFrame =>
  s === 'connected'
    ? { type: 'state', id, sid: 'ses_1', fence: 1, state: { state: 'connected', identifier: '+1', upstreamUserId: null }, at: 0 }
    : { type: 'state', id, sid: 'ses_1', fence: 1, state: { state: 'connecting' }, at: 0 }

describe('Outbox', () => {
  it('hands out frames in queue order and settles each on its ack', async () => {
    const box = new Outbox()
    const a = box.push(inbound('a'))
    const b = box.push(inbound('b'))
    expect(box.due(0).map((f) => f.id)).toEqual(['a', 'b'])
    box.settle({ type: 'ack', ids: ['b', 'a'] })
    await expect(Promise.all([a, b])).resolves.toEqual([
      { type: 'ack', ids: ['b', 'a'] },
      { type: 'ack', ids: ['b', 'a'] },
    ])
    expect(box.size).toBe(0)
  })

  it('sends a frame again only after the ack timeout or a reconnect', () => {
    const box = new Outbox()
    void box.push(inbound('a'))
    box.markSent('a', 1000)
    expect(box.due(999)).toEqual([])
    expect(box.due(1001).map((f) => f.id)).toEqual(['a'])
    box.markSent('a', 2000)
    box.markAllUnsent()
    expect(box.due(0).map((f) => f.id)).toEqual(['a'])
  })

  it('keeps at most `window` frames unanswered on the wire', () => {
    const box = new Outbox()
    for (const id of ['a', 'b', 'c', 'd']) void box.push(inbound(id))
    const first = box.due(0, 2)
    expect(first.map((f) => f.id)).toEqual(['a', 'b'])
    for (const f of first) box.markSent(f.id, 10)
    expect(box.due(0, 2)).toEqual([])
    expect(box.settle({ type: 'ack', ids: ['a'] })).toBe(10)
    expect(box.due(0, 2).map((f) => f.id)).toEqual(['c'])
  })

  it('puts a frame past its ack timeout back in queue order, ahead of newer unsent ones, within the window', () => {
    const box = new Outbox()
    for (const id of ['a', 'b']) void box.push(inbound(id))
    box.markSent('a', 1000)
    box.markSent('b', 5000)
    for (const id of ['c', 'd']) void box.push(inbound(id))
    // Nothing timed out: only the unsent ones, and the window counts what is on the wire.
    expect(box.due(999, 3).map((f) => f.id)).toEqual(['c'])
    // `a` timed out: it goes again first; `b` is still on the wire.
    expect(box.due(2000, 3).map((f) => f.id)).toEqual(['a', 'c'])
    box.markSent('a', 2000)
    box.markSent('c', 2000)
    expect(box.due(2000, 4).map((f) => f.id)).toEqual(['d'])
    box.settle({ type: 'ack', ids: ['b'] })
    expect(box.due(2000, 4).map((f) => f.id)).toEqual(['d'])
  })

  it('replaces an older state that is already on the wire, and sends the newer one', async () => {
    const box = new Outbox()
    const older = box.push(state('s1', 'connecting'), 'state:ses_1')
    box.markSent('s1', 10)
    const newer = box.push(state('s2', 'connected'), 'state:ses_1')
    expect(box.size).toBe(1)
    expect(box.due(0).map((f) => f.id)).toEqual(['s2'])
    box.settle({ type: 'ack', ids: ['s1'] })
    expect(box.size).toBe(1)
    box.settle({ type: 'ack', ids: ['s2'] })
    await expect(Promise.all([older, newer])).resolves.toMatchObject([{ type: 'ack' }, { type: 'ack' }])
  })

  it('lets a newer state replace an unanswered older one, answering both', async () => {
    const box = new Outbox()
    const older = box.push(state('s1', 'connecting'), 'state:ses_1')
    const newer = box.push(state('s2', 'connected'), 'state:ses_1')
    expect(box.due(0).map((f) => f.id)).toEqual(['s2'])
    box.settle({ type: 'ack', ids: ['s2'] })
    await expect(older).resolves.toMatchObject({ type: 'ack' })
    await expect(newer).resolves.toMatchObject({ type: 'ack' })
  })

  it('settles a frame with a reject or a session load answer', async () => {
    const box = new Outbox()
    const a = box.push(inbound('a'))
    box.settle({ type: 'reject', id: 'a', sid: 'ses_1', reason: 'stale_fence' })
    await expect(a).resolves.toMatchObject({ type: 'reject', reason: 'stale_fence' })
  })

  it('reports drained once nothing waits for an answer, or false at the timeout', async () => {
    const box = new Outbox()
    void box.push(inbound('a'))
    expect(await box.drained(20)).toBe(false)
    const drained = box.drained(1000)
    box.settle({ type: 'ack', ids: ['a'] })
    expect(await drained).toBe(true)
  })

  it('answers link_closed, once closed, to every frame still waiting and to every later one, so no stop waits forever', async () => {
    const box = new Outbox()
    const waiting = box.push(inbound('a'))
    const drained = box.drained(60_000)
    box.close()
    await expect(waiting).resolves.toEqual({ type: 'link_closed' })
    expect(await drained).toBe(true)
    await expect(box.push(inbound('b'))).resolves.toEqual({ type: 'link_closed' })
    expect(box.size).toBe(0)
    expect(box.due(0)).toEqual([])
  })
})
