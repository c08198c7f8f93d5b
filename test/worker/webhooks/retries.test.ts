/**
 * Retries on an injected clock: the schedule (1 min, 5 min, 30 min, 2 h) step by step through the Durable Object's
 * alarm, Retry-After on 429/503, retries off, and a pending retry surviving eviction. The clock starts a year
 * ahead so the alarms never fire on their own; each step is driven with runDurableObjectAlarm.
 */
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { connectCustom, newTenant, pushInbound, receiverChannel, type TestTenant } from '../helpers'
import { accountObject, api, createWebhook, deliveries, health, settledLog } from '../webhook-helpers'
import { freezeClockYearAhead } from '../state'

const MIN = 60_000
let T0 = 0

beforeEach(() => {
  T0 = freezeClockYearAhead()
})
afterEach(() => {
  vi.useRealTimers()
})

async function setup(reply: { status: number; headers?: Record<string, string> }[], retries = true) {
  const t = await newTenant()
  await connectCustom(t)
  const ch = receiverChannel('retry')
  await ch.behave({ sequence: reply })
  await createWebhook(t, { url: ch.url, subscribed_to: ['message.received'], name: 'hook', retries_enabled: retries })
  await pushInbound(t, { body: 'retry me', fromId: 'user-r' })
  await ch.waitFor(1)
  const [row] = await settledLog(t, 'hook', 1)
  return { t, ch, row: row! }
}

async function alarmAt(t: TestTenant): Promise<number | null> {
  return runInDurableObject(accountObject(t), async (_instance, state) => state.storage.getAlarm())
}

/** Moves the clock and fires the object's alarm, which runs whatever is due by then. */
async function fireAt(t: TestTenant, at: number) {
  vi.setSystemTime(at)
  return runDurableObjectAlarm(accountObject(t))
}

describe('retry schedule', () => {
  it('retries after 1 min, 5 min, 30 min and 2 h with the same delivery id, then gives up', async () => {
    const { t, ch, row } = await setup([{ status: 500 }, { status: 500 }, { status: 502 }, { status: 503 }, { status: 500 }])
    expect(row).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_status_code: 500,
      last_failure_type: 'temporary',
      next_attempt_at: new Date(T0 + MIN).toISOString(),
    })

    // Once the first attempt is recorded only its retry holds the alarm (the fan-out guard is gone); an early run
    // changes nothing.
    await fireAt(t, T0 + 5_000)
    expect(await alarmAt(t)).toBe(T0 + MIN)

    const steps = [MIN, 5 * MIN, 30 * MIN, 120 * MIN]
    let at = T0
    for (const [i, delay] of steps.entries()) {
      // One millisecond early nothing is sent.
      await fireAt(t, at + delay - 1)
      expect(await ch.log()).toHaveLength(i + 1)
      at += delay
      expect(await fireAt(t, at)).toBe(true)
      const log = await ch.waitFor(i + 2)
      expect(log).toHaveLength(i + 2)
      expect(log[i + 1]!.headers['x-webhook-attempt']).toBe(String(i + 2))
      expect(log[i + 1]!.headers['x-webhook-delivery']).toBe(row.delivery_id)
      expect(log[i + 1]!.body).toBe(log[0]!.body)
    }
    const [last] = await deliveries(t, 'hook')
    expect(last).toMatchObject({ status: 'failed', attempts: 5, next_attempt_at: null, last_status_code: 500 })
    expect(await health(t, 'hook')).toMatchObject({ consecutive_failures: 5, total_failures: 5, total_successes: 0 })
    // Nothing is left to do: the alarm no longer holds a webhook timer.
    await fireAt(t, at + 10 * 3_600_000)
    expect(await ch.log()).toHaveLength(5)
  })

  it('stops retrying once a retry succeeds', async () => {
    const { t, ch } = await setup([{ status: 500 }, { status: 200 }])
    await fireAt(t, T0 + MIN)
    await ch.waitFor(2)
    const [row] = await settledLog(t, 'hook', 1, (d) => d.status === 'delivered')
    expect(row).toMatchObject({ status: 'delivered', attempts: 2, last_status_code: 200, last_failure_type: null, next_attempt_at: null })
    expect(await health(t, 'hook')).toMatchObject({ consecutive_failures: 0, total_failures: 1, total_successes: 1 })
  })

  it('makes one attempt only when retries are off', async () => {
    const { t, ch, row } = await setup([{ status: 500 }], false)
    expect(row).toMatchObject({ status: 'failed', attempts: 1, next_attempt_at: null })
    await fireAt(t, T0 + 5_000)
    await fireAt(t, T0 + 3 * 3_600_000)
    expect(await ch.log()).toHaveLength(1)
  })

  it('keeps a pending retry when the account is removed: its events outlive it', async () => {
    const { t, ch } = await setup([{ status: 500 }, { status: 200 }])
    expect((await api(t, 'DELETE', '/channels/custom')).status).toBe(200)
    await fireAt(t, T0 + MIN)
    const log = await ch.waitFor(2)
    expect(log[1]!.headers['x-webhook-attempt']).toBe('2')
    expect(log[1]!.headers['x-webhook-event']).toBe('message.received')
  })

  it('survives eviction: the retry is still due after the object restarts', async () => {
    const { t, ch } = await setup([{ status: 500 }, { status: 200 }])
    await evictDurableObject(accountObject(t))
    await fireAt(t, T0 + MIN)
    const log = await ch.waitFor(2)
    expect(log[1]!.headers['x-webhook-attempt']).toBe('2')
  })
})

describe('Retry-After', () => {
  it('is honoured on 429 when longer than the scheduled delay', async () => {
    const { row } = await setup([{ status: 429, headers: { 'retry-after': '120' } }])
    expect(row.next_attempt_at).toBe(new Date(T0 + 2 * MIN).toISOString())
  })

  it('is capped at the next step of the schedule (5 min after the first attempt)', async () => {
    const { row } = await setup([{ status: 503, headers: { 'retry-after': '86400' } }])
    expect(row.next_attempt_at).toBe(new Date(T0 + 5 * MIN).toISOString())
  })

  it('never brings a retry earlier than the schedule', async () => {
    const { row } = await setup([{ status: 429, headers: { 'retry-after': '1' } }])
    expect(row.next_attempt_at).toBe(new Date(T0 + MIN).toISOString())
  })

  it('accepts an HTTP date', async () => {
    const date = new Date(T0 + 3 * MIN).toUTCString()
    const { row } = await setup([{ status: 503, headers: { 'retry-after': date } }])
    expect(row.next_attempt_at).toBe(new Date(T0 + 3 * MIN).toISOString())
  })

  it('is ignored on other statuses', async () => {
    const { row } = await setup([{ status: 500, headers: { 'retry-after': '240' } }])
    expect(row.next_attempt_at).toBe(new Date(T0 + MIN).toISOString())
  })
})
