/**
 * D1 failing in the middle of an ingest batch (issue 14 §6), with real D1 and Durable Objects: a custom-channel push
 * answers the documented retryable 503 and its repeat is stored once; in a group-committed batch only the failing
 * message fails; a relay's inbound frames whose commit failed are not acked, and their resend is stored once.
 */
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import type { RelayFrame } from '../../../schema/frames'
import { contactIdFor } from '../../../worker/lib/ids'
import { body, call, connectCustom, newTenant, pushInbound, type TestTenant } from '../helpers'
import { closeRelaysAfterEach, linkedAlphaAccount } from '../relay-helpers'
import { contactRow } from '../state'
import { failD1 } from './d1-fault'

const relays = closeRelaysAfterEach()

/** Inbound rows of the tenant straight from D1: text and upstream id, oldest first. */
async function storedInbound(tenantId: string) {
  const r = await env.DB.prepare("SELECT text, upstream_id AS up FROM messages WHERE tenant_id = ? AND direction = 'inbound' ORDER BY seq")
    .bind(tenantId)
    .all<{ text: string; up: string | null }>()
  return r.results
}

async function receivedEvents(tenantId: string) {
  const r = await env.DB.prepare("SELECT count(*) AS n FROM events WHERE tenant_id = ? AND type = 'message.received'").bind(tenantId).first<{ n: number }>()
  return r?.n ?? 0
}

async function customTenant(): Promise<TestTenant> {
  const t = await newTenant()
  await connectCustom(t)
  return t
}

describe('POST /v1/channels/custom/inbound while D1 fails mid-batch', () => {
  it('answers 503 temporarily_unavailable with Retry-After, stores nothing, and stores the repeated push once', async () => {
    const t = await customTenant()
    // The third of the four ingest statements (message.received) fails: contact upsert and message insert ran first.
    const fault = await failD1('events', 'INSERT', `NEW.tenant_id = '${t.tenantId}' AND NEW.type = 'message.received'`)
    const push = { body: 'hello through a failure', fromId: 'bridge-1', messageSid: 'SID-1' }
    const res = await call('/v1/channels/custom/inbound', { method: 'POST', key: t.key, json: { customData: push } })
    expect(res.status).toBe(503)
    expect(res.headers.get('Retry-After')).toBe('1')
    expect(await body(res)).toEqual({ success: false, error: expect.any(String), error_code: 503 })
    // The batch was rolled back whole: no message, no event, not even the contact upserted before the failure.
    expect(await storedInbound(t.tenantId)).toEqual([])
    expect(await receivedEvents(t.tenantId)).toBe(0)
    expect(await contactRow(t.tenantId, await contactIdFor(t.tenantId, 'custom', { kind: 'external', value: 'bridge-1' }))).toBeUndefined()

    await fault.heal()
    const first = await pushInbound(t, push)
    expect(first).toMatchObject({ status: 200, body: { success: true, duplicate: false } })
    const again = await pushInbound(t, push)
    expect(again).toMatchObject({ status: 200, body: { duplicate: true, message_id: first.body.message_id } })
    expect(await storedInbound(t.tenantId)).toEqual([{ text: push.body, up: 'SID-1' }])
    expect(await receivedEvents(t.tenantId)).toBe(1)
  })

  it('fails only the message whose statements failed when concurrent pushes share a batch; each is stored once', async () => {
    const t = await customTenant()
    const fault = await failD1('messages', 'INSERT', `NEW.tenant_id = '${t.tenantId}' AND NEW.text = 'poison'`)
    const texts = ['a', 'b', 'poison', 'c', 'd']
    const results = await Promise.all(texts.map((text, i) => pushInbound(t, { body: text, fromId: `p${i % 2}`, messageSid: `S-${text}` })))
    expect(results.map((r) => r.status)).toEqual([200, 200, 503, 200, 200])
    expect((await storedInbound(t.tenantId)).map((m) => m.text).sort()).toEqual(['a', 'b', 'c', 'd'])

    await fault.heal()
    for (const [i, text] of texts.entries()) {
      const r = await pushInbound(t, { body: text, fromId: `p${i % 2}`, messageSid: `S-${text}` })
      expect(r).toMatchObject({ status: 200, body: { duplicate: text !== 'poison' } })
    }
    expect((await storedInbound(t.tenantId)).map((m) => m.up).sort()).toEqual(texts.map((x) => `S-${x}`).sort())
    expect(await receivedEvents(t.tenantId)).toBe(texts.length)
  })
})

describe('relay inbound frames while D1 fails mid-batch', () => {
  it('are not acked when their commit failed, and their resend is stored once and acked', async () => {
    const { t, relay, assign: a, stateAnswer } = await linkedAlphaAccount(relays, '1667')
    expect(stateAnswer).toMatchObject({ type: 'ack' })

    const fault = await failD1('messages', 'INSERT', `NEW.tenant_id = '${t.tenantId}' AND NEW.text = 'poison'`)
    const frame = (i: number, text: string): RelayFrame & { id: string } => ({
      type: 'inbound',
      id: relay.id(),
      sid: a.sid,
      fence: a.fence,
      message: {
        upstreamId: `UP-${i}`,
        from: { id: `4477009004${i % 3}@s.whatsapp.net`, phone: `+4477009004${i % 3}`, lid: null, name: null },
        text,
        media: null,
        sentAt: Date.now(),
      },
    })
    const burst = Array.from({ length: 12 }, (_, i) => frame(i, i === 5 ? 'poison' : `burst-${i}`))
    for (const f of burst) relay.send(f)
    const acked = () => new Set(relay.frames.flatMap((f) => (f.type === 'ack' ? f.ids : [])))

    // The others are stored (a failed group is retried message by message); then a frame sent after them is
    // handled after the failed batch (frames of a session go in order), so its ack means that batch was answered.
    await expect.poll(async () => (await storedInbound(t.tenantId)).length, { timeout: 5000 }).toBe(burst.length - 1)
    expect(await relay.request(frame(99, 'marker'))).toMatchObject({ type: 'ack' })
    const unacked = burst.filter((f) => !acked().has(f.id))
    expect(unacked.map((f) => f.id)).toContain(burst[5]!.id)

    await fault.heal()
    // What a relay does after its ack timeout: the unanswered frames again, same ids.
    for (const f of unacked) expect(await relay.request(f)).toMatchObject({ type: 'ack' })
    const stored = await storedInbound(t.tenantId)
    expect(stored.map((m) => m.up).sort()).toEqual([...burst.map((f) => (f.type === 'inbound' ? f.message.upstreamId : '')), 'UP-99'].sort())
    expect(await receivedEvents(t.tenantId)).toBe(burst.length + 1)
  })
})
