/**
 * Issue 22 item 4: a tenant's rows live on its own shard (DB_SHARD_0 is the directory's database, DB_SHARD_1 another)
 * and never on the other, each read here through the binding itself; GET /admin/shards counts them; a failing shard
 * answers 503 only for its own tenants; new tenants are placed where there is most room.
 */
import { createScheduledController } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import worker from '../../../worker/index'
import { admin, body, call, connectCustom, pushInbound, receiverChannel } from '../helpers'
import { api, createWebhook, deliveries } from '../webhook-helpers'
import { rowsOn, SHARDS, tenantOn, textsOn } from './shard-helpers'

describe('tenants on two shards', () => {
  it('keeps each tenant’s rows on its own shard and lists only its own', async () => {
    const a = await tenantOn(0)
    const b = await tenantOn(1)
    await connectCustom(a)
    await connectCustom(b)
    for (const i of [1, 2]) {
      expect((await pushInbound(a, { body: `a${i}`, fromId: 'ua' })).status).toBe(200)
      expect((await pushInbound(b, { body: `b${i}`, fromId: 'ub' })).status).toBe(200)
    }
    expect(await textsOn(0, a.tenantId)).toEqual(['a1', 'a2'])
    expect(await textsOn(1, a.tenantId)).toEqual([])
    expect(await textsOn(1, b.tenantId)).toEqual(['b1', 'b2'])
    expect(await textsOn(0, b.tenantId)).toEqual([])
    for (const table of ['accounts', 'contacts', 'events', 'audit_log']) {
      expect(await rowsOn(0, table, b.tenantId), table).toBe(0)
      expect(await rowsOn(1, table, b.tenantId), table).toBeGreaterThan(0)
    }
    // The key and the tenant stay in the directory, whatever the shard.
    const key = await SHARDS[0]!.prepare('SELECT tenant_id FROM api_keys WHERE id = ?').bind(b.keyId).first<{ tenant_id: string }>()
    expect(key?.tenant_id).toBe(b.tenantId)
    expect(await SHARDS[1]!.prepare('SELECT count(*) AS n FROM api_keys WHERE tenant_id = ?').bind(b.tenantId).first('n')).toBe(0)

    const listed = async (key: string) => (await body<{ messages: Array<{ text: string }> }>(await call('/v1/messages', { key }))).messages.map((m) => m.text)
    expect((await listed(a.key)).sort()).toEqual(['a1', 'a2'])
    expect((await listed(b.key)).sort()).toEqual(['b1', 'b2'])
  })

  it('lists the shards with their tenants and sizes', async () => {
    await tenantOn(1)
    const res = await admin('/admin/shards')
    expect(res.status).toBe(200)
    const list = await body<{ shards: Array<{ shard: number; tenants: number; size_bytes: number; level: string }>; alarm: boolean }>(res)
    expect(list.shards.map((s) => s.shard)).toEqual([0, 1])
    expect(list.shards[1]!.tenants).toBeGreaterThan(0)
    for (const s of list.shards) {
      expect(s.size_bytes).toBeGreaterThan(0)
      expect(s.level).toBe('ok')
    }
    expect(list.alarm).toBe(false)
  })

  it('refuses a shard the gateway does not bind', async () => {
    const res = await admin('/admin/tenants', { method: 'POST', json: { shard: 2 } })
    expect(res.status).toBe(400)
    expect(await body(res)).toMatchObject({ success: false, error: expect.stringContaining('No shard 2'), error_code: 400 })
  })

  it('answers 503 only for the tenants of a shard that fails', async () => {
    const a = await tenantOn(0)
    const b = await tenantOn(1)
    await connectCustom(a)
    await connectCustom(b)
    // Shard 1 refuses every message insert, as a storage failure would (test/worker/faults/d1-fault.ts, on its binding).
    await SHARDS[1]!.prepare("CREATE TRIGGER shard1_down BEFORE INSERT ON messages BEGIN SELECT RAISE(ABORT, 'injected D1 fault'); END").run()
    try {
      const down = await call('/v1/channels/custom/inbound', { method: 'POST', key: b.key, json: { customData: { body: 'lost?', fromId: 'ub' } } })
      expect(down.status).toBe(503)
      expect(down.headers.get('Retry-After')).not.toBeNull()
      expect((await pushInbound(a, { body: 'fine', fromId: 'ua' })).status).toBe(200)
      expect(await textsOn(0, a.tenantId)).toEqual(['fine'])
    } finally {
      await SHARDS[1]!.prepare('DROP TRIGGER shard1_down').run()
    }
    expect((await pushInbound(b, { body: 'again', fromId: 'ub' })).status).toBe(200)
    expect(await textsOn(1, b.tenantId)).toEqual(['again'])
  })

  it('runs webhooks, replays, the audit log and the cron for a tenant on shard 1 as on shard 0', async () => {
    const DAY = 86_400_000
    for (const shard of [0, 1]) {
      const t = await tenantOn(shard)
      await connectCustom(t)
      const ch = receiverChannel(`shard${shard}`)
      await createWebhook(t, { url: ch.url, subscribed_to: ['message.received'], name: 'hook' })
      expect((await pushInbound(t, { body: 'hello', fromId: 'u1' })).status).toBe(200)
      expect(await ch.waitFor(1)).toHaveLength(1)
      const delivered = await deliveries(t, 'hook')
      expect(delivered.map((d) => d.status)).toEqual(['delivered'])
      expect(await rowsOn(shard, 'webhook_deliveries', t.tenantId)).toBe(1)
      expect(await rowsOn(1 - shard, 'webhook_deliveries', t.tenantId)).toBe(0)

      const replay = await api(t, 'POST', '/webhooks/hook/replay', { since: new Date(Date.now() - DAY).toISOString(), include_delivered: true })
      expect(replay).toMatchObject({ status: 200, body: { queued: 1 } })
      expect((await ch.waitFor(2)).map((r) => r.headers['x-webhook-delivery'])).toEqual([delivered[0]!.delivery_id, delivered[0]!.delivery_id])

      // The webhook's creation is a change: audited on the tenant's shard, listed through the API.
      const audit = await body<{ entries: Array<{ action: string }> }>(await call('/v1/audit', { key: t.key }))
      expect(audit.entries.map((e) => e.action)).toContain('POST /v1/webhooks')
      expect(await rowsOn(shard, 'audit_log', t.tenantId)).toBeGreaterThan(0)
      expect(await rowsOn(1 - shard, 'audit_log', t.tenantId)).toBe(0)

      // Eight days on, the cron has pruned the event and its deliveries on the tenant's shard (the 7-day window).
      await worker.scheduled(createScheduledController({ scheduledTime: Date.now() + 8 * DAY, cron: '* * * * *' }), env)
      expect(await rowsOn(shard, 'events', t.tenantId)).toBe(0)
      expect(await rowsOn(shard, 'webhook_deliveries', t.tenantId)).toBe(0)
      expect(await textsOn(shard, t.tenantId)).toEqual(['hello'])
    }
  })
})
