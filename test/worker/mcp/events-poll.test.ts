// events/poll (SEP-3415 poll delivery): held open like GET /v1/messages/wait, resumable by cursor with nothing
// skipped or repeated, narrowed by the subscription arguments and the key's accounts, in both protocol eras.
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { database } from '../../../worker/db/client'
import { insertEvent } from '../../../worker/db/events'
import { accountEventPayload } from '../../../worker/events/payloads'
import { encodeCursor } from '../../../worker/lib/cursor'
import { call, connectCustom, newTenant, pushInbound, send, settled } from '../helpers'
import { events, mintKey } from './events-helpers'

type Polled = {
  events: Array<{ eventId: string; name: string; timestamp: string; data: Record<string, unknown> }>
  cursor: string
  truncated: boolean
  hasMore: boolean
  nextPollMs: number
}

const poll = async (era: 'legacy' | 'modern', key: string, params: Record<string, unknown>) => {
  const answer = await events(era, key, 'events/poll', params)
  if (answer.error) throw new Error(`events/poll failed: ${JSON.stringify(answer.error)}`)
  return answer.result as unknown as Polled
}

describe.each(['legacy', 'modern'] as const)('events/poll (%s era)', (era) => {
  it('starts from now without a cursor, then holds until a message.received arrives and hands it out exactly once', async () => {
    const t = await newTenant()
    await connectCustom(t)
    await pushInbound(t, { body: 'before the subscription', fromId: 'p-0' })
    const started = Date.now()
    const first = await poll(era, t.key, { name: 'message.received' })
    expect(first).toMatchObject({ events: [], truncated: false, hasMore: false, nextPollMs: 1000 })
    expect(Date.now() - started).toBeLessThan(2000)

    const waiting = poll(era, t.key, { name: 'message.received', cursor: first.cursor, timeoutMs: 15_000 })
    await new Promise((r) => setTimeout(r, 300))
    expect((await pushInbound(t, { body: 'Are you open today?', fromId: 'p-1', firstName: 'Ada' })).status).toBe(200)
    const got = await waiting
    expect(got.events).toHaveLength(1)
    const [occurrence] = got.events
    expect(occurrence).toEqual({
      eventId: expect.stringMatching(/^evt_[0-9A-Za-z]{22}$/),
      name: 'message.received',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: expect.objectContaining({
        event: 'message.received',
        account_id: 'custom',
        channel: 'custom',
        message: expect.objectContaining({ direction: 'inbound', text: 'Are you open today?', status: 'received' }),
        contact: expect.objectContaining({ name: 'Ada' }),
      }),
    })
    expect(got.cursor).not.toBe(first.cursor)

    const after = await poll(era, t.key, { name: 'message.received', cursor: got.cursor, timeoutMs: 300 })
    expect(after.events).toEqual([])
    // A client that lost the answer resumes from its last cursor and gets the same event, nothing else.
    const resumed = await poll(era, t.key, { name: 'message.received', cursor: first.cursor, timeoutMs: 0 })
    expect(resumed.events.map((e) => e.eventId)).toEqual([occurrence!.eventId])
    expect(resumed.cursor).toBe(got.cursor)
  })
})

describe('events/poll', () => {
  it('answers empty when the timeout passes, with a cursor that moved past what it checked', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const { cursor } = await poll('modern', t.key, { name: 'message.received' })
    // Another tenant's traffic advances the outbox; this subscription's cursor moves past it without an event.
    const other = await newTenant()
    await connectCustom(other)
    await pushInbound(other, { body: 'not yours', fromId: 'x' })
    const started = Date.now()
    const empty = await poll('modern', t.key, { name: 'message.received', cursor, timeoutMs: 500 })
    expect(Date.now() - started).toBeGreaterThanOrEqual(450)
    expect(empty.events).toEqual([])
    expect(empty.cursor).not.toBe(cursor)
  })

  it('finds events nothing announces (message.sent) by checking again while it waits', async () => {
    const t = await newTenant()
    await connectCustom(t)
    await pushInbound(t, { body: 'hi', fromId: 'p-9' })
    const { cursor } = await poll('legacy', t.key, { name: 'message.sent' })
    const waiting = poll('legacy', t.key, { name: 'message.sent', cursor, timeoutMs: 15_000 })
    const sent = await send(t, { to: { external_id: 'p-9' }, text: 'Hello back' })
    expect(sent.status).toBe(202)
    await settled(t, (sent.body as { message_id: string }).message_id)
    const got = await waiting
    expect(got.events.map((e) => [e.name, (e.data.message as { text: string }).text])).toEqual([['message.sent', 'Hello back']])
  })

  it('hands out only events passing the arguments (contact, channel)', async () => {
    const t = await newTenant()
    await connectCustom(t)
    await pushInbound(t, { body: 'seed', fromId: 'p-a' })
    const contact = ((await (await call('/v1/messages?limit=1', { key: t.key })).json()) as { messages: Array<{ contact: { id: string } }> }).messages[0]!
      .contact.id
    const { cursor } = await poll('modern', t.key, { name: 'message.received' })
    await pushInbound(t, { body: 'from b', fromId: 'p-b' })
    await pushInbound(t, { body: 'from a', fromId: 'p-a' })
    const mine = await poll('modern', t.key, { name: 'message.received', arguments: { contact_id: contact }, cursor, timeoutMs: 0 })
    expect(mine.events.map((e) => (e.data.message as { text: string }).text)).toEqual(['from a'])
    const onSms = await poll('modern', t.key, { name: 'message.received', arguments: { channel: 'sms' }, cursor, timeoutMs: 0 })
    expect(onSms.events).toEqual([])
    const onCustom = await poll('modern', t.key, { name: 'message.received', arguments: { channel: 'custom' }, cursor, timeoutMs: 0 })
    expect(onCustom.events).toHaveLength(2)
  })

  it('skips events older than maxAgeMs and says so with truncated', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const { cursor } = await poll('modern', t.key, { name: 'account.restricted' })
    const db = database(env.DB)
    const account = { id: 'custom', channel: 'custom' as const, identifier: 'x', status: 'restricted' as const }
    await db.batch([
      insertEvent(db, t.tenantId, 'custom', accountEventPayload('account.restricted', account, 'blocked_by_alpha', Date.now() - 60_000), Date.now() - 60_000),
    ])
    const bounded = await poll('modern', t.key, { name: 'account.restricted', cursor, maxAgeMs: 10_000, timeoutMs: 0 })
    expect(bounded).toMatchObject({ events: [], truncated: true })
    const all = await poll('modern', t.key, { name: 'account.restricted', cursor, timeoutMs: 0 })
    expect(all).toMatchObject({ events: [{ name: 'account.restricted' }], truncated: false })
  })

  it('gives a read key message events of its own accounts only', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const reader = await mintKey(t, { scope: 'read', accounts: ['custom'] })
    const { cursor } = await poll('modern', reader, { name: 'message.received' })
    await pushInbound(t, { body: 'seen by the reader', fromId: 'p-r' })
    expect((await poll('modern', reader, { name: 'message.received', cursor, timeoutMs: 5000 })).events).toHaveLength(1)
    const outside = await events('modern', reader, 'events/poll', { name: 'message.received', arguments: { account_ids: ['+15551230000'] } })
    expect(outside.error).toMatchObject({ code: -32024, message: expect.stringContaining('+15551230000') })
    const approvals = await events('modern', reader, 'events/poll', { name: 'message.approval_required' })
    expect(approvals.error).toMatchObject({ code: -32024 })
  })

  it('refuses an unknown event (-32023), arguments outside the inputSchema and a foreign cursor (-32602)', async () => {
    const t = await newTenant()
    const unknown = await events('modern', t.key, 'events/poll', { name: 'message.exploded' })
    expect(unknown.error).toMatchObject({ code: -32023, data: { kind: 'event' } })
    const badArgs = await events('legacy', t.key, 'events/poll', { name: 'account.connected', arguments: { contact_id: 'con_1' } })
    expect(badArgs.error).toMatchObject({ code: -32602, message: expect.stringContaining('arguments') })
    const badPhone = await events('legacy', t.key, 'events/poll', { name: 'message.received', arguments: { contact_phone: '555' } })
    expect(badPhone.error?.code).toBe(-32602)
    const badCursor = await events('modern', t.key, 'events/poll', { name: 'message.received', cursor: 'not-ours' })
    expect(badCursor.error).toMatchObject({ code: -32602, message: expect.stringContaining('cursor') })
    // Well formed, but of a placement the tenant never had: refused the same way, not "moving, retry" for ever.
    const unplaced = await events('modern', t.key, 'events/poll', { name: 'message.received', cursor: encodeCursor('event', 5, 3) })
    expect(unplaced.error).toMatchObject({ code: -32602, message: expect.stringContaining('cursor') })
  })
})
