/**
 * The delivery log and replay: paging newest first, the 7-day window, and recovery after a pause where each missed
 * event arrives exactly once with its original delivery id. Also the sweeper that re-kicks stranded fan-outs and
 * prunes what is past retention.
 */
import { env } from 'cloudflare:workers'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { call, connectCustom, newTenant, pushInbound, receiverChannel, type TestTenant } from '../helpers'
import { api, createWebhook, deliveries, settledLog, until, type WireDelivery } from '../webhook-helpers'
import { database } from '../../../worker/db/client'
import { insertEvent } from '../../../worker/db/events'
import { accountEventPayload } from '../../../worker/events/payloads'
import { sweepWebhooks } from '../../../worker/webhooks/sweeper'

const DAY = 86_400_000
let T0 = 0
let seq = 0

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
  T0 = Math.floor((Date.now() + 365 * DAY) / 1000) * 1000
  vi.setSystemTime(T0)
})
afterEach(() => {
  vi.useRealTimers()
})

async function push(t: TestTenant, n: number, total: number, name = 'hook') {
  for (let i = 0; i < n; i++) {
    expect((await pushInbound(t, { body: `event ${seq}`, fromId: `r-${seq++}` })).status).toBe(200)
    await settledLog(t, name, total - n + i + 1)
    vi.setSystemTime(Date.now() + 1)
  }
}

describe('GET /v1/webhooks/{webhookId}/deliveries', () => {
  it('pages newest first with an opaque cursor and filters by status', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const ch = receiverChannel('log')
    await ch.behave({ sequence: [{ status: 200 }, { status: 500 }, { status: 200 }, { status: 200 }, { status: 500 }] })
    await createWebhook(t, { url: ch.url, subscribed_to: ['message.received'], name: 'hook' })
    await push(t, 5, 5)
    const page1 = await api<{ deliveries: WireDelivery[]; next_cursor: string | null }>(t, 'GET', '/webhooks/hook/deliveries?limit=2')
    const page2 = await api<{ deliveries: WireDelivery[]; next_cursor: string | null }>(
      t,
      'GET',
      `/webhooks/hook/deliveries?limit=2&cursor=${page1.body.next_cursor}`
    )
    const page3 = await api<{ deliveries: WireDelivery[]; next_cursor: string | null }>(
      t,
      'GET',
      `/webhooks/hook/deliveries?limit=2&cursor=${page2.body.next_cursor}`
    )
    expect(page3.body.next_cursor).toBeNull()
    const all = [...page1.body.deliveries, ...page2.body.deliveries, ...page3.body.deliveries]
    expect(all.map((d) => d.status)).toEqual(['failed', 'delivered', 'delivered', 'failed', 'delivered'])
    expect(all.map((d) => d.created_at)).toEqual([...all.map((d) => d.created_at)].sort().reverse())
    const received = (await ch.log()).map((r) => r.headers['x-webhook-delivery']).reverse()
    expect(all.map((d) => d.delivery_id)).toEqual(received)
    const failed = await api<{ deliveries: WireDelivery[] }>(t, 'GET', '/webhooks/hook/deliveries?status=failed')
    expect(failed.body.deliveries).toHaveLength(2)
    expect(failed.body.deliveries[0]).toMatchObject({
      event: 'message.received',
      event_id: expect.stringMatching(/^evt_/),
      attempts: 1,
      last_status_code: 500,
      last_failure_type: 'temporary',
      last_error: 'answered HTTP 500',
    })
  })

  it('refuses a bad limit, status or cursor with 400', async () => {
    const t = await newTenant()
    await createWebhook(t, { url: 'https://hooks.example.com/x', subscribed_to: ['message.received'], name: 'hook' })
    for (const q of ['limit=0', 'limit=101', 'status=lost', 'cursor=abc']) {
      const res = await api(t, 'GET', `/webhooks/hook/deliveries?${q}`)
      expect(res.status, q).toBe(400)
      expect(res.body).toEqual({ success: false, error: expect.any(String), error_code: 400 })
    }
  })

  it('shows 7 days only', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const ch = receiverChannel('old')
    await createWebhook(t, { url: ch.url, subscribed_to: ['message.received'], name: 'hook' })
    await push(t, 1, 1)
    vi.setSystemTime(T0 + 7 * DAY + 10)
    expect(await deliveries(t, 'hook')).toEqual([])
  })
})

describe('POST /v1/webhooks/{webhookId}/replay', () => {
  it('after a pause and re-enable, delivers each missed event once with its original delivery id', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const ch = receiverChannel('replay')
    await ch.behave({ sequence: [{ status: 200 }, { status: 410 }] })
    await createWebhook(t, { url: ch.url, subscribed_to: ['message.received'], name: 'hook', retries_enabled: true })
    await push(t, 2, 2) // delivered, then 410: paused
    await push(t, 3, 5) // recorded as paused
    const missed = (await deliveries(t, 'hook')).filter((d) => d.status !== 'delivered')
    expect(missed.map((d) => d.status).sort()).toEqual(['failed', 'paused', 'paused', 'paused'])
    expect(await ch.log()).toHaveLength(2)

    const blocked = await api(t, 'POST', '/webhooks/hook/replay', { since: new Date(T0).toISOString() })
    expect(blocked.status).toBe(409)
    expect((await api(t, 'POST', '/webhooks/hook/reenable')).status).toBe(200)
    const res = await api(t, 'POST', '/webhooks/hook/replay', { since: new Date(T0).toISOString() })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, webhook_id: '0', queued: 4, already_delivered: 1, in_flight: 0, next_since: null })

    const log = await ch.waitFor(6)
    const replayed = log.slice(2)
    expect(replayed.map((r) => r.headers['x-webhook-delivery']).sort()).toEqual(missed.map((d) => d.delivery_id).sort())
    const after = await settledLog(t, 'hook', 5, (d) => d.status === 'delivered')
    expect(after.every((d) => d.status === 'delivered')).toBe(true)

    // A second replay finds nothing undelivered; include_delivered re-sends everything, still with the same ids.
    const again = await api(t, 'POST', '/webhooks/hook/replay', { since: new Date(T0).toISOString() })
    expect(again.body).toMatchObject({ queued: 0, already_delivered: 5 })
    await new Promise((r) => setTimeout(r, 300))
    expect(await ch.log()).toHaveLength(6)
    const all = await api(t, 'POST', '/webhooks/hook/replay', { since: new Date(T0).toISOString(), include_delivered: true })
    expect(all.body).toMatchObject({ queued: 5, already_delivered: 0 })
    const resent = (await ch.waitFor(11)).slice(6).map((r) => r.headers['x-webhook-delivery'])
    expect(resent.sort()).toEqual(after.map((d) => d.delivery_id).sort())
  })

  it('sends events from before a subscription existed, within the window, for its subscribed events only', async () => {
    const t = await newTenant()
    await connectCustom(t)
    for (let i = 0; i < 2; i++) await pushInbound(t, { body: `early ${i}`, fromId: `e-${i}` })
    vi.setSystemTime(T0 + 5)
    const ch = receiverChannel('late')
    await createWebhook(t, { url: ch.url, subscribed_to: ['message.received'], name: 'late' })
    expect(await deliveries(t, 'late')).toEqual([])
    const res = await api(t, 'POST', '/webhooks/late/replay', { since: new Date(T0 - 1000).toISOString(), until: new Date(T0 + 5).toISOString() })
    expect(res.body).toMatchObject({ queued: 2 })
    const got = await ch.waitFor(2)
    expect(got.map((r) => (r.json as { message: { text: string } }).message.text).sort()).toEqual(['early 0', 'early 1'])
    // account.connected happened in the window too, but the subscription does not want it.
    expect(got.every((r) => r.headers['x-webhook-event'] === 'message.received')).toBe(true)
  })

  it('validates the window and refuses a switched-off subscription', async () => {
    const t = await newTenant()
    await createWebhook(t, { url: 'https://hooks.example.com/x', subscribed_to: ['message.received'], name: 'hook' })
    expect((await api(t, 'POST', '/webhooks/hook/replay', { since: new Date(T0 - 8 * DAY).toISOString() })).status).toBe(400)
    expect((await api(t, 'POST', '/webhooks/hook/replay', { since: new Date(T0).toISOString(), until: new Date(T0 - 1).toISOString() })).status).toBe(400)
    expect((await api(t, 'POST', '/webhooks/hook/replay', { since: 'yesterday' })).status).toBe(400)
    expect((await api(t, 'POST', '/webhooks/hook/replay', {})).status).toBe(400)
    await api(t, 'PUT', '/webhooks/hook', { name: 'hook', enabled: false })
    const off = await api(t, 'POST', '/webhooks/hook/replay', { since: new Date(T0 - DAY).toISOString() })
    expect(off.status).toBe(409)
    expect(off.body).toEqual({ success: false, error: expect.stringContaining('switched off'), error_code: 409 })
  })
})

describe('sweeper (cron)', () => {
  it('fans out events whose notice was lost', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const ch = receiverChannel('orphan')
    await createWebhook(t, { url: ch.url, subscribed_to: ['account.restricted'], name: 'hook' })
    const db = database(env.DB)
    const payload = accountEventPayload(
      'account.restricted',
      { id: 'custom', channel: 'custom', identifier: 'x', status: 'restricted' },
      'blocked_by_alpha',
      T0
    )
    // Written with a bare batch, as a producer that forgot the commit helper would: nobody is told.
    await db.batch([insertEvent(db, t.tenantId, 'custom', payload, T0)])
    await new Promise((r) => setTimeout(r, 200))
    expect(await ch.log()).toEqual([])
    const early = await sweepWebhooks(env, db, T0 + 30_000)
    expect(early.kicked).toBe(0)
    const report = await sweepWebhooks(env, db, T0 + 61_000)
    expect(report.kicked).toBeGreaterThanOrEqual(1)
    const [r] = await ch.waitFor(1)
    expect(r!.json).toMatchObject({ event: 'account.restricted', account: { reason: 'blocked_by_alpha' } })
  })

  it('deletes log rows and events older than 7 days and keeps newer ones', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const ch = receiverChannel('prune')
    await createWebhook(t, { url: ch.url, subscribed_to: ['message.received'], name: 'hook' })
    await push(t, 1, 1)
    vi.setSystemTime(T0 + 3 * DAY)
    await push(t, 1, 2)
    const count = async (table: string) =>
      (await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = ?`).bind(t.tenantId).first<{ n: number }>())!.n
    expect(await count('webhook_deliveries')).toBe(2)
    const report = await sweepWebhooks(env, database(env.DB), T0 + 7 * DAY + 1000)
    expect(report.prunedDeliveries).toBeGreaterThanOrEqual(1)
    expect(await count('webhook_deliveries')).toBe(1)
    await until(async () => (await count('events')) === 1, 'old events pruned, the newer one kept')
  })
})

describe('replay limits (issue 14 §2)', () => {
  const replay = (t: TestTenant) => api(t, 'POST', '/webhooks/hook/replay', { since: new Date(Date.now() - 60_000).toISOString() })

  it('refuses a replay while another of the same subscription runs, with Retry-After', async () => {
    const t = await newTenant()
    await createWebhook(t, { url: 'https://hooks.example.com/x', subscribed_to: ['message.received'], name: 'hook' })
    const id = (await env.DB.prepare('SELECT id FROM webhooks WHERE tenant_id = ?').bind(t.tenantId).first<{ id: string }>())!.id
    // A replay call that has started and not finished (another request, in flight right now).
    await env.DB.prepare('INSERT INTO webhook_replays (id, webhook_id, started_at) VALUES (?, ?, ?)')
      .bind(`rpl_test_${seq++}`, id, Date.now() - 1_000)
      .run()
    const refused = await call('/v1/webhooks/hook/replay', { method: 'POST', key: t.key, json: { since: new Date(Date.now() - 60_000).toISOString() } })
    expect(refused.status).toBe(429)
    expect(refused.headers.get('Retry-After')).toBe('59')
    expect(await refused.json()).toEqual({ success: false, error: expect.stringContaining('already running'), error_code: 429 })
    // A call that died without finishing stops counting after its lease.
    vi.setSystemTime(Date.now() + 60_000)
    expect((await replay(t)).status).toBe(200)
  })

  it('allows 20 replays of a subscription an hour, then 429 until the oldest is an hour old', async () => {
    const t = await newTenant()
    await createWebhook(t, { url: 'https://hooks.example.com/x', subscribed_to: ['message.received'], name: 'hook' })
    for (let i = 0; i < 20; i++) {
      expect((await replay(t)).status).toBe(200)
      vi.setSystemTime(Date.now() + 1_000)
    }
    const refused = await replay(t)
    expect(refused.status).toBe(429)
    expect(refused.body.error).toContain('20 times in the last hour')
    vi.setSystemTime(T0 + 3_600_001)
    expect((await replay(t)).status).toBe(200)
  })
})
