/**
 * The account's group commit end to end (issue 23 §3), counted in D1 batches (round trips) with real D1 and Durable
 * Objects: the messages of a relay burst share one batch, concurrent pushes of one account share batches, and so do
 * a burst of receipts, each keeping its order and its effects (status only forward, one event per move).
 */
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { accountStub } from '../../../worker/lib/objects'
import { body, call, connectCustom, newTenant, pushInbound, send } from '../helpers'
import { closeRelaysAfterEach, linkedAlphaAccount } from '../relay-helpers'

const relays = closeRelaysAfterEach()

/**
 * Records the SQL of every D1 batch of this isolate (the Durable Objects share it) while `work` runs: one entry per
 * round trip, so a test can count the batches that carried what it sent.
 */
async function batchesDuring(work: () => Promise<unknown>): Promise<string[][]> {
  const proto: Record<string, unknown> = Object.getPrototypeOf(env.DB)
  const original = proto.batch as (this: D1Database, statements: D1PreparedStatement[]) => Promise<D1Result[]>
  const seen: string[][] = []
  proto.batch = function (this: D1Database, statements: D1PreparedStatement[]) {
    seen.push(statements.map((s) => String(Reflect.get(s, 'statement') ?? '')))
    return original.call(this, statements)
  }
  try {
    await work()
  } finally {
    proto.batch = original
  }
  return seen
}

/** Batches that inserted inbound messages. */
const inboundBatches = (batches: string[][]) => batches.filter((b) => b.some((sql) => /insert into "?messages"?/i.test(sql)))

async function inboundTexts(tenantId: string): Promise<string[]> {
  const r = await env.DB.prepare("SELECT text FROM messages WHERE tenant_id = ? AND direction = 'inbound' ORDER BY seq").bind(tenantId).all<{ text: string }>()
  return r.results.map((m) => m.text)
}

async function receivedEvents(tenantId: string): Promise<number> {
  const r = await env.DB.prepare("SELECT count(*) AS n FROM events WHERE tenant_id = ? AND type = 'message.received'").bind(tenantId).first<{ n: number }>()
  return r?.n ?? 0
}

/**
 * Sends a relay burst of `n` messages from one person straight to the account's object (as the hub does) and returns
 * the D1 batches of all but the first (which reads the account once, before the figures).
 */
async function relayBurst(n: number, prefix: string) {
  const { t, assign } = await linkedAlphaAccount(relays, '1669')
  const stub = accountStub(env, t.tenantId, assign.account.accountId)
  const ref = { tenantId: t.tenantId, accountId: assign.account.accountId, channel: 'alpha_web' as const }
  const from = { id: '447700900501@s.whatsapp.net', phone: '+447700900501', lid: null, name: null }
  const burst = Array.from({ length: n }, (_, i) => ({ upstreamId: `${prefix}${i}`, from, text: `${prefix} ${i}`, media: null, sentAt: Date.now() }))
  await stub.relayInbound(ref, assign.sid, burst.slice(0, 1))
  const batches = await batchesDuring(() => stub.relayInbound(ref, assign.sid, burst.slice(1)))
  return { t, batches, texts: burst.map((b) => b.text) }
}

describe('the inbound group commit', () => {
  it('stores a relay burst of 20 messages in one D1 batch, in order, each with its event', async () => {
    const { t, batches, texts } = await relayBurst(20, 'GC')
    expect(inboundBatches(batches)).toHaveLength(1)
    expect(await inboundTexts(t.tenantId)).toEqual(texts)
    expect(await receivedEvents(t.tenantId)).toBe(20)
  })

  it('splits a burst larger than one batch into as few batches as fit (100 statements, three per message)', async () => {
    const { t, batches, texts } = await relayBurst(50, 'GD')
    expect(inboundBatches(batches).map((b) => b.length)).toEqual([99, 48])
    expect(await inboundTexts(t.tenantId)).toEqual(texts)
  })

  it('lets concurrent pushes of one account share D1 batches, each stored once', async () => {
    const t = await newTenant()
    await connectCustom(t)
    expect((await pushInbound(t, { body: 'first', fromId: 'p0', messageSid: 'C-first' })).status).toBe(200)
    const texts = Array.from({ length: 12 }, (_, i) => `c${i}`)
    const batches = await batchesDuring(() =>
      Promise.all(texts.map(async (text, i) => expect((await pushInbound(t, { body: text, fromId: `p${i % 3}`, messageSid: `C-${text}` })).status).toBe(200)))
    )
    const used = inboundBatches(batches)
    expect(used.length).toBeLessThan(texts.length)
    expect(used.flat().filter((sql) => /insert into "?messages"?/i.test(sql))).toHaveLength(texts.length)
    expect((await inboundTexts(t.tenantId)).sort()).toEqual(['first', ...texts].sort())
    expect(await receivedEvents(t.tenantId)).toBe(texts.length + 1)
  })
})

/** Batches that moved message statuses (receipts). */
const statusBatches = (batches: string[][]) => batches.filter((b) => b.some((sql) => /^update "?messages"? set "?status"?/i.test(sql)))

describe('the receipts group commit', () => {
  /** An alpha account with `n` outbound messages the relay reported sent, upstream ids RC0… */
  async function sentMessages(n: number, prefix: string) {
    const { t, relay, phone, assign } = await linkedAlphaAccount(relays, '1670')
    const stub = accountStub(env, t.tenantId, phone)
    const ref = { tenantId: t.tenantId, accountId: phone, channel: 'alpha_web' as const }
    const ids: string[] = []
    for (let i = 0; i < n; i++) {
      // A person each, who wrote first: the loop guard allows three sends to one person between their replies.
      const to = `+4477009006${String(i).padStart(2, '0')}`
      const from = { id: `${to.slice(1)}@s.whatsapp.net`, phone: to, lid: null, name: null }
      const message = { upstreamId: `${prefix}-in${i}`, from, text: 'q', media: null, sentAt: Date.now() }
      expect(await relay.request({ type: 'inbound', id: relay.id(), sid: assign.sid, fence: assign.fence, message })).toMatchObject({ type: 'ack' })
      const sent = await send(t, { account_id: phone, to: { phone: to }, text: `o${i}` })
      expect(sent.body).toMatchObject({ message_id: expect.any(String) })
      const id = sent.body.message_id as string
      await stub.relaySent(ref, assign.sid, id, `${prefix}${i}`)
      ids.push(id)
    }
    return { t, stub, ref, sid: assign.sid, ids }
  }

  async function statusOf(t: { key: string }, id: string): Promise<unknown> {
    return (await body(await call(`/v1/messages/${id}`, { key: t.key }))).status
  }

  async function moveEvents(tenantId: string): Promise<string[]> {
    const r = await env.DB.prepare(
      "SELECT type, json_extract(payload, '$.message.id') AS id FROM events WHERE tenant_id = ? AND type IN ('message.delivered', 'message.read') ORDER BY rowid"
    )
      .bind(tenantId)
      .all<{ type: string; id: string }>()
    return r.results.map((e) => `${e.type} ${e.id}`)
  }

  it('moves a read watermark over many messages in one read and one D1 batch, each with its event', async () => {
    const { t, stub, ref, ids } = await sentMessages(6, 'RW')
    const batches = await batchesDuring(async () => {
      const outcomes = await stub.receiptsFor(ref, [
        ...ids.map((_, i) => ({ upstreamId: `RW${i}`, status: 'delivered' as const })),
        ...ids.map((_, i) => ({ upstreamId: `RW${i}`, status: 'read' as const })),
        { upstreamId: 'RW0', status: 'delivered' as const }, // late: after read, changes nothing
        { upstreamId: 'RW-unknown', status: 'read' as const },
      ])
      expect(outcomes).toEqual([...ids.map(() => 'applied'), ...ids.map(() => 'applied'), 'unchanged', 'unknown_message'])
    })
    expect(statusBatches(batches)).toHaveLength(1)
    expect(batches).toHaveLength(1) // the read of the messages is not a batch; the moves are one
    for (const id of ids) expect(await statusOf(t, id)).toBe('read')
    expect(await moveEvents(t.tenantId)).toEqual([...ids.map((id) => `message.delivered ${id}`), ...ids.map((id) => `message.read ${id}`)])
  })

  // Whether separate RPCs overlap a running batch depends on the machine's timing, so this one checks order and
  // outcomes only; one batch for a run of receipts is proven with receiptsFor above and the hub's frame-path test.
  it('applies concurrent relay receipts in order, status only moving forward', async () => {
    const { t, stub, ref, sid, ids } = await sentMessages(5, 'RC')
    const receipts = [
      ...ids.map((_, i) => ({ upstreamId: `RC${i}`, status: 'delivered' as const })),
      ...ids.map((_, i) => ({ upstreamId: `RC${i}`, status: 'read' as const })),
      { upstreamId: 'RC1', status: 'delivered' as const },
    ]
    const outcomes = await Promise.all(receipts.map((r) => stub.relayReceipt(ref, sid, r)))
    expect(outcomes).toEqual([...ids.map(() => 'applied'), ...ids.map(() => 'applied'), 'unchanged'])
    for (const id of ids) expect(await statusOf(t, id)).toBe('read')
    expect(await moveEvents(t.tenantId)).toEqual([...ids.map((id) => `message.delivered ${id}`), ...ids.map((id) => `message.read ${id}`)])
  })
})
