import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { commitTracker, type UpdateState } from '../../../relay/beta/commit-tracker'
import type { InboundMessage, Receipt } from '../../../relay/connector'

const at = (pts: number): UpdateState => ({ pts, qts: 0, date: 1_000 + pts, seq: 0 })
const message = (id: string): InboundMessage => ({
  upstreamId: id,
  from: { id: 'u1.1', phone: null, lid: null, name: null, username: null },
  text: id,
  media: null,
  sentAt: 0,
})

function tracker() {
  const saved: UpdateState[] = []
  const inbound: InboundMessage[] = []
  const receipts: Receipt[] = []
  const t = commitTracker({
    events: { inbound: (m) => inbound.push(m), receipt: (r) => receipts.push(r) },
    save: async (raw) => void saved.push(JSON.parse(raw) as UpdateState),
    log: pino({ level: 'silent' }),
    persistEveryMs: 1_000,
  })
  return { t, saved, inbound, receipts }
}

describe('the update state saved with a beta session', () => {
  beforeEach(() => vi.useFakeTimers())
  afterEach(() => vi.useRealTimers())

  it('never moves past an update whose message the edge has not stored, and catches up once it has', async () => {
    const { t, saved, inbound } = tracker()
    const first = t.open(at(5))
    first.events.inbound(message('m5'))
    first.close()
    const second = t.open(at(6))
    second.events.inbound(message('m6'))
    second.close()
    // The edge stored m6 but not m5 yet: nothing may be saved (a restart must fetch m5 again).
    inbound[1]!.onCommitted?.()
    await vi.advanceTimersByTimeAsync(5_000)
    expect(saved).toEqual([])
    inbound[0]!.onCommitted?.()
    await vi.advanceTimersByTimeAsync(999)
    expect(saved).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(saved).toEqual([at(6)])
  })

  it('writes at most once per interval, the newest state, and flushes on close but not after it', async () => {
    const { t, saved, receipts } = tracker()
    for (const pts of [1, 2, 3]) {
      const u = t.open(at(pts))
      u.close()
    }
    await vi.advanceTimersByTimeAsync(1_000)
    expect(saved).toEqual([at(3)])
    const late = t.open(at(4))
    late.events.receipt({ upstreamId: '10', status: 'read' })
    late.close()
    await t.close()
    expect(saved).toEqual([at(3)])
    // Acknowledged after the session stopped (it may have been wiped meanwhile): not written.
    receipts[0]!.onCommitted?.()
    await vi.advanceTimersByTimeAsync(5_000)
    expect(saved).toEqual([at(3)])
  })

  it('starts from the state it was given and writes nothing until something moves', async () => {
    const { t, saved } = tracker()
    t.loaded(at(9))
    await t.flush()
    expect(saved).toEqual([])
    t.open(at(10)).close()
    await t.flush()
    expect(saved).toEqual([at(10)])
  })
})
