/**
 * The account's group commit end to end (issue 23 §3), counted in D1 batches (round trips) with real D1 and Durable
 * Objects: the messages of a relay burst share one batch, concurrent pushes of one account share batches, and so do
 * a burst of receipts, each keeping its order and its effects.
 */
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { accountStub } from '../../../worker/lib/objects'
import { connectCustom, newTenant, pushInbound } from '../helpers'
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

describe('the inbound group commit', () => {
  it('stores a relay burst of 20 messages in one D1 batch, in order, each with its event', async () => {
    const { t, assign } = await linkedAlphaAccount(relays, '1669')
    const stub = accountStub(env, t.tenantId, assign.account.accountId)
    const ref = { tenantId: t.tenantId, accountId: assign.account.accountId, channel: 'alpha_web' as const }
    const from = { id: '447700900501@s.whatsapp.net', phone: '+447700900501', lid: null, name: null }
    const burst = Array.from({ length: 20 }, (_, i) => ({ upstreamId: `GC${i}`, from, text: `g${i}`, media: null, sentAt: Date.now() }))
    await stub.relayInbound(ref, assign.sid, burst.slice(0, 1)) // the account is read once, before the figures

    const batches = await batchesDuring(() => stub.relayInbound(ref, assign.sid, burst.slice(1)))
    expect(inboundBatches(batches)).toHaveLength(1)
    expect(await inboundTexts(t.tenantId)).toEqual(burst.map((b) => b.text))
    expect(await receivedEvents(t.tenantId)).toBe(20)
  })

  it('splits a burst larger than one batch into as few batches as fit (100 statements, four per message)', async () => {
    const { t, assign } = await linkedAlphaAccount(relays, '1669')
    const stub = accountStub(env, t.tenantId, assign.account.accountId)
    const ref = { tenantId: t.tenantId, accountId: assign.account.accountId, channel: 'alpha_web' as const }
    const from = { id: '447700900502@s.whatsapp.net', phone: '+447700900502', lid: null, name: null }
    const burst = Array.from({ length: 50 }, (_, i) => ({ upstreamId: `GD${i}`, from, text: `d${i}`, media: null, sentAt: Date.now() }))
    await stub.relayInbound(ref, assign.sid, burst.slice(0, 1))

    const batches = await batchesDuring(() => stub.relayInbound(ref, assign.sid, burst.slice(1)))
    expect(inboundBatches(batches).map((b) => b.length)).toEqual([100, 96])
    expect(await inboundTexts(t.tenantId)).toEqual(burst.map((b) => b.text))
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
