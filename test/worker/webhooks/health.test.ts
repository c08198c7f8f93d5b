/**
 * Per-URL health and the pause rule: counters, 410, redirects and timeouts on real deliveries, auto-pause at 15
 * consecutive failures whose first is an hour old (and not one failure or one millisecond before), recording
 * while paused, re-enable, URL change and delete. Clock injected; receivers real.
 */
import { runDurableObjectAlarm } from 'cloudflare:test'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { connectCustom, newTenant, pushInbound, receiverChannel, type TestTenant } from '../helpers'
import { accountObject, api, createWebhook, deliveries, health, settledLog } from '../webhook-helpers'
import { freezeClockYearAhead } from '../state'

const HOUR = 3_600_000
let T0 = 0
let seq = 0

beforeEach(() => {
  T0 = freezeClockYearAhead()
})
afterEach(() => {
  vi.useRealTimers()
})

async function tenantWithHook(behaviour: Parameters<ReturnType<typeof receiverChannel>['behave']>[0], retries = false) {
  const t = await newTenant()
  await connectCustom(t)
  const ch = receiverChannel('health')
  await ch.behave(behaviour)
  await createWebhook(t, { url: ch.url, subscribed_to: ['message.received'], name: 'hook', retries_enabled: retries })
  return { t, ch }
}

/**
 * Pushes `n` inbound messages, one clock millisecond apart (so the newest-first log has a definite order), and
 * waits until the log holds `total` settled rows.
 */
async function events(t: TestTenant, n: number, total: number) {
  for (let i = 0; i < n; i++) {
    expect((await pushInbound(t, { body: `event ${seq}`, fromId: `p-${seq++}` })).status).toBe(200)
    await settledLog(t, 'hook', total - n + i + 1)
    vi.setSystemTime(Date.now() + 1)
  }
  return settledLog(t, 'hook', total)
}

describe('health counters', () => {
  it('is null before the first attempt, then counts successes and failures; a success resets the run', async () => {
    const { t, ch } = await tenantWithHook({ sequence: [{ status: 500 }, { status: 500 }, { status: 200 }] })
    expect(await health(t, 'hook')).toBeNull()
    await events(t, 2, 2)
    vi.setSystemTime(T0 + 1000)
    expect(await health(t, 'hook')).toMatchObject({
      consecutive_failures: 2,
      total_failures: 2,
      total_successes: 0,
      is_disabled: false,
      last_failure: { timestamp: new Date(T0 + 1).toISOString(), status_code: 500, failure_type: 'temporary', error_message: 'answered HTTP 500' },
      last_success_at: null,
      created_at: new Date(T0).toISOString(),
    })
    await events(t, 1, 3)
    expect(await health(t, 'hook')).toMatchObject({
      consecutive_failures: 0,
      total_failures: 2,
      total_successes: 1,
      last_success_at: new Date(T0 + 1000).toISOString(),
    })
    expect(await ch.log()).toHaveLength(3)
  })

  it('records a redirect as a failure of unknown type (neither 4xx nor 5xx) and never follows it', async () => {
    const target = receiverChannel('target')
    const { t } = await tenantWithHook({ status: 302, headers: { location: target.url } })
    const [row] = await events(t, 1, 1)
    expect(row).toMatchObject({ status: 'failed', last_status_code: 302, last_failure_type: 'unknown' })
    expect((await health(t, 'hook'))!.last_failure).toMatchObject({ status_code: 302, failure_type: 'unknown' })
    expect(await target.log()).toEqual([])
  })

  it('records a timeout when the receiver does not answer within the delivery timeout', async () => {
    const { t } = await tenantWithHook({ delay_ms: 1500 })
    const [row] = await events(t, 1, 1)
    expect(row).toMatchObject({ status: 'failed', last_status_code: null, last_failure_type: 'timeout' })
  })

  it('records a network failure when nothing listens', async () => {
    const t = await newTenant()
    await connectCustom(t)
    await createWebhook(t, { url: 'http://127.0.0.1:9/closed', subscribed_to: ['message.received'], name: 'hook' })
    const [row] = await events(t, 1, 1)
    expect(row).toMatchObject({ status: 'failed', last_status_code: null, last_failure_type: 'network' })
  })

  it('classifies 4xx as permanent and 408/429/5xx as temporary', async () => {
    const { t } = await tenantWithHook({ sequence: [{ status: 404 }, { status: 408 }, { status: 429 }, { status: 401 }] })
    const log = await events(t, 4, 4)
    expect(log.map((d) => [d.last_status_code, d.last_failure_type]).reverse()).toEqual([
      [404, 'permanent'],
      [408, 'temporary'],
      [429, 'temporary'],
      [401, 'permanent'],
    ])
  })
})

describe('auto-pause', () => {
  it('pauses at once on 410 Gone; later events are recorded as paused and not sent', async () => {
    const { t, ch } = await tenantWithHook({ sequence: [{ status: 410 }] }, true)
    const [gone] = await events(t, 1, 1)
    expect(gone).toMatchObject({ status: 'failed', last_status_code: 410, next_attempt_at: null })
    expect(await health(t, 'hook')).toMatchObject({
      is_disabled: true,
      disabled_at: new Date(T0).toISOString(),
      disabled_reason: 'the receiver answered 410 Gone',
      consecutive_failures: 1,
    })
    const log = await events(t, 2, 3)
    expect(log.slice(0, 2).map((d) => d.status)).toEqual(['paused', 'paused'])
    expect(log[0]!.attempts).toBe(0)
    expect(await ch.log()).toHaveLength(1)
  })

  it('needs 15 consecutive failures: 14 are not enough, even over hours', async () => {
    const { t } = await tenantWithHook({ status: 500 })
    await events(t, 13, 13)
    vi.setSystemTime(T0 + 2 * HOUR)
    await events(t, 1, 14)
    expect(await health(t, 'hook')).toMatchObject({ consecutive_failures: 14, is_disabled: false })
    await events(t, 1, 15)
    const h = await health(t, 'hook')
    expect(h).toMatchObject({ consecutive_failures: 15, is_disabled: true, disabled_at: new Date(T0 + 2 * HOUR + 1).toISOString() })
    expect(h!.disabled_reason).toContain('15 consecutive failed deliveries')
  })

  it('needs the first of them to be an hour old: not one millisecond earlier', async () => {
    const { t, ch } = await tenantWithHook({ status: 500 })
    await events(t, 15, 15)
    expect(await health(t, 'hook')).toMatchObject({ consecutive_failures: 15, is_disabled: false })
    vi.setSystemTime(T0 + HOUR - 1)
    await events(t, 1, 16)
    expect(await health(t, 'hook')).toMatchObject({ consecutive_failures: 16, is_disabled: false })
    vi.setSystemTime(T0 + HOUR)
    await events(t, 1, 17)
    expect(await health(t, 'hook')).toMatchObject({ consecutive_failures: 17, is_disabled: true })
    await events(t, 1, 18)
    expect((await deliveries(t, 'hook'))[0]!.status).toBe('paused')
    expect(await ch.log()).toHaveLength(17)
  })

  it('a success in between starts the run over', async () => {
    const { t } = await tenantWithHook({ sequence: [...Array(14).fill({ status: 500 }), { status: 200 }], status: 500 })
    await events(t, 15, 15)
    vi.setSystemTime(T0 + 2 * HOUR)
    await events(t, 1, 16)
    expect(await health(t, 'hook')).toMatchObject({ consecutive_failures: 1, is_disabled: false })
  })

  it('drops a scheduled retry to paused when the URL is paused before it is due', async () => {
    const { t, ch } = await tenantWithHook({ sequence: [{ status: 500 }, { status: 410 }] }, true)
    await events(t, 1, 1) // fails, retry due in 1 min
    vi.setSystemTime(T0 + 1000)
    await events(t, 1, 2) // 410: paused
    vi.setSystemTime(T0 + 60_000)
    await runDurableObjectAlarm(accountObject(t))
    await runDurableObjectAlarm(accountObject(t))
    const log = await deliveries(t, 'hook')
    expect(log.map((d) => d.status)).toEqual(['failed', 'paused'])
    expect(await ch.log()).toHaveLength(2)
  })
})

describe('re-enable, URL change, delete', () => {
  it('re-enable resets the paused flag and failure counters and sends nothing', async () => {
    const { t, ch } = await tenantWithHook({ sequence: [{ status: 200 }, { status: 410 }] })
    await events(t, 2, 2)
    await events(t, 1, 3)
    const res = await api<{ health: Record<string, unknown> }>(t, 'POST', '/webhooks/hook/reenable')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ success: true, webhook_id: '0', url: ch.url })
    expect(res.body.health).toMatchObject({
      is_disabled: false,
      disabled_at: null,
      disabled_reason: null,
      consecutive_failures: 0,
      total_failures: 0,
      total_successes: 1,
    })
    expect(await ch.log()).toHaveLength(2)
    await events(t, 1, 4)
    expect((await deliveries(t, 'hook'))[0]!.status).toBe('delivered')
  })

  it('changing the URL resumes delivery, also back to a URL that was paused', async () => {
    const { t, ch } = await tenantWithHook({ status: 410 })
    await events(t, 1, 1)
    expect((await health(t, 'hook'))!.is_disabled).toBe(true)
    const other = receiverChannel('other')
    expect((await api(t, 'PUT', '/webhooks/hook', { url: other.url })).status).toBe(200)
    await events(t, 1, 2)
    expect(await other.waitFor(1)).toHaveLength(1)
    await ch.behave({ status: 200 })
    expect((await api(t, 'PUT', '/webhooks/hook', { url: ch.url })).status).toBe(200)
    expect(await health(t, 'hook')).toMatchObject({ is_disabled: false, consecutive_failures: 0 })
    await events(t, 1, 3)
    expect(await ch.waitFor(2)).toHaveLength(2)
  })

  it('deleting a subscription resets the health of its URL', async () => {
    const { t, ch } = await tenantWithHook({ status: 500 })
    await events(t, 2, 2)
    expect((await health(t, 'hook'))!.total_failures).toBe(2)
    await api(t, 'DELETE', '/webhooks/hook')
    await createWebhook(t, { url: ch.url, subscribed_to: ['message.received'], name: 'again' })
    expect(await health(t, 'again')).toBeNull()
  })

  it('test deliveries leave existing counters alone', async () => {
    const { t, ch } = await tenantWithHook({ status: 500 })
    await events(t, 1, 1)
    const before = await health(t, 'hook')
    await ch.behave({ status: 200 })
    expect((await api(t, 'POST', '/webhooks/hook/test')).body).toMatchObject({ delivered: true })
    await ch.behave({ status: 410 })
    expect((await api(t, 'POST', '/webhooks/hook/test')).body).toMatchObject({ delivered: false, status_code: 410 })
    expect(await health(t, 'hook')).toEqual(before)
  })
})
