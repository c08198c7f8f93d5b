/**
 * Issue 22 §5: what D1 is asked to do per inbound message, per send, per webhook delivery and per wait answer,
 * counted from D1's own answers (statements, round trips, `meta.rows_read`, `meta.rows_written`) over the real
 * Worker and Durable Objects. Each figure is printed as `capacity figure {json}` for `npm run bench -- capacity`
 * (test/bench/capacity.bench.ts, docs/CAPACITY.md), and the statement counts of the message paths are held here:
 * a statement more per message fails this test.
 */
import { env } from 'cloudflare:workers'
import { afterAll, describe, expect, it } from 'vitest'
import { meterEveryD1, UNMETERED, type D1Totals } from '../d1-meter'
import { body, call, connectCustom, newTenant, pushInbound, receiverChannel, send } from '../helpers'

const meter = meterEveryD1(env.DB)
afterAll(() => meter.restore())

type CapacityFigure = { name: string; count: number; statements: number; roundTrips: number; rowsRead: number; rowsWritten: number }

function figure(name: string, count: number, t: D1Totals): CapacityFigure {
  const per = (v: number) => Math.round((v / count) * 100) / 100
  const f = { name, count, statements: per(t.statements), roundTrips: per(t.roundTrips), rowsRead: per(t.rowsRead), rowsWritten: per(t.rowsWritten) }
  console.log(`capacity figure ${JSON.stringify(f)}`)
  return f
}

/** Polls D1 (outside the figures) until `sql` counts 0. */
async function drained(sql: string, ...params: unknown[]): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    const row = await env.DB.prepare(`${UNMETERED} ${sql}`)
      .bind(...params)
      .first<{ n: number }>()
    if (row?.n === 0) return
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`never drained: ${sql}`)
}

const INBOUND = 100
const SENDS = 50
const WAITS = 30
/** Sends with and without a key, from one account: both counts stay under its daily cap of 50. */
const KEYED_SENDS = 20

describe('D1 work per operation', () => {
  it('stores an inbound message in one batch of 3 statements, with no read before or after it', async () => {
    const t = await newTenant()
    await connectCustom(t)
    await pushInbound(t, { body: 'warm-up', fromId: 'p0' })
    const totals = await meter.measure(async () => {
      for (let i = 0; i < INBOUND; i++) await pushInbound(t, { body: `inbound ${i}`, fromId: `p${i % 20}` })
    })
    figure('inbound message (custom channel push, no webhook)', INBOUND, totals)
    // The API key's owner is read again when its cache lapses (once a minute): not the message's cost.
    const keyLookups = meter.lastLog.filter((e) => e.sql.includes('from "api_keys"')).length
    expect(totals.statements - keyLookups).toBe(3 * INBOUND)
    expect(totals.roundTrips - keyLookups).toBe(INBOUND)
  })

  it('delivers a webhook in a fixed number of statements per event', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const hooks = receiverChannel('capacity-hooks')
    const made = await call('/v1/webhooks', { method: 'POST', key: t.key, json: { url: hooks.url, subscribed_to: ['message.received'], name: 'capacity' } })
    expect(made.status, await made.clone().text()).toBe(201)
    await pushInbound(t, { body: 'warm-up', fromId: 'p0' })
    await hooks.waitFor(1)
    await drained("SELECT count(*) AS n FROM webhook_deliveries WHERE tenant_id = ? AND status = 'pending'", t.tenantId)
    const totals = await meter.measure(async () => {
      for (let i = 0; i < INBOUND; i++) await pushInbound(t, { body: `hooked ${i}`, fromId: `p${i % 20}` })
      await hooks.waitFor(INBOUND + 1, 20_000)
      await drained("SELECT count(*) AS n FROM webhook_deliveries WHERE tenant_id = ? AND status = 'pending'", t.tenantId)
    })
    figure('inbound message with one webhook subscription, delivered', INBOUND, totals)
  })

  it('queues a send in one batch and takes it to sent', async () => {
    const t = await newTenant()
    const bridge = await connectCustom(t)
    for (let i = 0; i < 17; i++) await pushInbound(t, { body: 'hi', fromId: `p${i}` })
    const totals = await meter.measure(async () => {
      for (let i = 0; i < SENDS; i++) expect((await send(t, { to: { external_id: `p${i % 17}` }, text: `reply ${i}` })).status).toBe(202)
      await bridge.waitFor(SENDS, 20_000)
      await drained("SELECT count(*) AS n FROM messages WHERE tenant_id = ? AND direction = 'outbound' AND status = 'queued'", t.tenantId)
    })
    figure('send (POST /v1/messages, delivered to the custom channel: queued → sent)', SENDS, totals)
  })

  it('adds one claim batch and one write to a send with an Idempotency-Key', async () => {
    const t = await newTenant()
    const bridge = await connectCustom(t)
    for (let i = 0; i < 17; i++) await pushInbound(t, { body: 'hi', fromId: `p${i}` })
    const sendAll = (keyed: boolean, from: number) =>
      meter.measure(async () => {
        for (let i = from; i < from + KEYED_SENDS; i++) {
          const headers = keyed ? { 'Idempotency-Key': `capacity-${i}` } : undefined
          const res = await call('/v1/messages', { method: 'POST', key: t.key, headers, json: { to: { external_id: `p${i % 17}` }, text: `reply ${i}` } })
          expect(res.status).toBe(202)
        }
        await bridge.waitFor(from + KEYED_SENDS, 20_000)
        await drained("SELECT count(*) AS n FROM messages WHERE tenant_id = ? AND direction = 'outbound' AND status = 'queued'", t.tenantId)
      })
    const plain = await sendAll(false, 0)
    const keyed = await sendAll(true, KEYED_SENDS)
    const extra: D1Totals = { statements: 0, roundTrips: 0, rowsRead: 0, rowsWritten: 0, changes: 0 }
    for (const k of Object.keys(extra) as (keyof D1Totals)[]) extra[k] = keyed[k] - plain[k]
    figure('idempotency key on a send (what the key adds to it)', KEYED_SENDS, extra)
    // The claim (an upsert and its read, one batch) and the kept answer: 3 statements, 2 round trips per send.
    expect(Math.round(extra.statements / KEYED_SENDS)).toBe(3)
    expect(Math.round(extra.roundTrips / KEYED_SENDS)).toBe(2)
  })

  it('answers a wait from its cursor with a bounded read', async () => {
    const t = await newTenant()
    await connectCustom(t)
    let cursor = (await body<{ cursor: string }>(await call('/v1/messages/wait?timeout_s=0', { key: t.key }))).cursor
    const totals: D1Totals = { statements: 0, roundTrips: 0, rowsRead: 0, rowsWritten: 0, changes: 0 }
    for (let i = 0; i < WAITS; i++) {
      await pushInbound(t, { body: `waited ${i}`, fromId: 'p0' })
      const one = await meter.measure(async () => {
        const answer = await body<{ messages: unknown[]; cursor: string }>(await call(`/v1/messages/wait?timeout_s=5&cursor=${cursor}`, { key: t.key }))
        expect(answer.messages).toHaveLength(1)
        cursor = answer.cursor
      })
      for (const k of Object.keys(totals) as (keyof D1Totals)[]) totals[k] += one[k]
    }
    figure('wait answer (GET /v1/messages/wait with a cursor, one message)', WAITS, totals)
  })
})
