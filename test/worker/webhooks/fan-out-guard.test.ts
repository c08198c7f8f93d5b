/**
 * The fan-out guard's cost (issue 23): a burst of pushes writes the account's alarm once and clears it once, not
 * twice per commit, and still leaves an idle account with no alarm. A guard that outlives its events (the object
 * evicted before the deferred clear) fires, finds nothing to send and is gone. Events whose fan-out failed are sent by
 * the guard exactly once: test/worker/faults/webhooks.test.ts.
 */
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { FAN_OUT_GRACE_MS } from '../../../worker/webhooks/outbox'
import { connectCustom, newTenant, pushInbound, receiverChannel, type TestTenant } from '../helpers'
import { freezeClockYearAhead } from '../state'
import { accountObject, createWebhook, settledLog } from '../webhook-helpers'

afterEach(() => vi.useRealTimers())

const alarmOf = (t: TestTenant) => runInDurableObject(accountObject(t), async (_i, state) => state.storage.getAlarm())

/** Counts the alarm writes (setAlarm, deleteAlarm) the account's object makes while `work` runs. */
async function alarmWritesDuring(t: TestTenant, work: () => Promise<unknown>): Promise<{ set: number; deleted: number }> {
  const storage = await runInDurableObject(accountObject(t), async (_i, state) => state.storage)
  const proto: Record<string, unknown> = Object.getPrototypeOf(storage)
  const original = { set: proto.setAlarm as (...a: unknown[]) => Promise<void>, del: proto.deleteAlarm as (...a: unknown[]) => Promise<void> }
  const counts = { set: 0, deleted: 0 }
  proto.setAlarm = function (this: unknown, ...args: unknown[]) {
    counts.set++
    return original.set.apply(this, args)
  }
  proto.deleteAlarm = function (this: unknown, ...args: unknown[]) {
    counts.deleted++
    return original.del.apply(this, args)
  }
  try {
    await work()
  } finally {
    Object.assign(proto, { setAlarm: original.set, deleteAlarm: original.del })
  }
  return counts
}

async function subscribedTenant(label: string) {
  const t = await newTenant()
  await connectCustom(t)
  const hook = receiverChannel(label)
  await createWebhook(t, { url: hook.url, subscribed_to: ['message.received'], name: label })
  return { t, hook }
}

describe('the fan-out guard', () => {
  it('costs one alarm write and one delete for a burst of 10 pushes, each delivered once, and no alarm after it', async () => {
    const { t, hook } = await subscribedTenant('guard-burst')
    expect((await pushInbound(t, { body: 'warm', fromId: 'g1' })).status).toBe(200)
    await settledLog(t, 'guard-burst', 1)
    await vi.waitFor(async () => expect(await alarmOf(t)).toBeNull(), { timeout: 2000 })

    const writes = await alarmWritesDuring(t, async () => {
      for (let i = 0; i < 10; i++) expect((await pushInbound(t, { body: `b${i}`, fromId: 'g1' })).status).toBe(200)
      await settledLog(t, 'guard-burst', 11)
      await vi.waitFor(async () => expect(await alarmOf(t)).toBeNull(), { timeout: 2000 })
    })
    expect(writes).toEqual({ set: 1, deleted: 1 })
    expect((await hook.waitFor(11)).length).toBe(11)
  })

  it('costs one alarm write for a burst of concurrent pushes', async () => {
    const { t } = await subscribedTenant('guard-concurrent')
    expect((await pushInbound(t, { body: 'warm', fromId: 'g2' })).status).toBe(200)
    await settledLog(t, 'guard-concurrent', 1)
    await vi.waitFor(async () => expect(await alarmOf(t)).toBeNull(), { timeout: 2000 })

    const writes = await alarmWritesDuring(t, async () => {
      const pushed = await Promise.all(Array.from({ length: 12 }, (_, i) => pushInbound(t, { body: `c${i}`, fromId: `g2-${i % 3}` })))
      expect(pushed.every((p) => p.status === 200)).toBe(true)
      await settledLog(t, 'guard-concurrent', 13)
      await vi.waitFor(async () => expect(await alarmOf(t)).toBeNull(), { timeout: 2000 })
    })
    expect(writes).toEqual({ set: 1, deleted: 1 })
  })

  it('left behind by an eviction, fires, sends nothing again and leaves no alarm', async () => {
    const T0 = freezeClockYearAhead()
    const { t, hook } = await subscribedTenant('guard-stale')
    expect((await pushInbound(t, { body: 'once', fromId: 'g3' })).status).toBe(200)
    await settledLog(t, 'guard-stale', 1)
    // Evicted around the deferred clear: the guard may still be there (its clear died with the object), never later.
    await evictDurableObject(accountObject(t))
    expect([null, T0 + FAN_OUT_GRACE_MS]).toContain(await alarmOf(t))
    vi.setSystemTime(T0 + FAN_OUT_GRACE_MS)
    await runDurableObjectAlarm(accountObject(t))
    expect(await alarmOf(t)).toBeNull()
    expect(await hook.log()).toHaveLength(1)
    expect(await settledLog(t, 'guard-stale', 1)).toHaveLength(1)
  })
})
