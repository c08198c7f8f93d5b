/**
 * The inbound step in the AccountDO, through POST /v1/channels/custom/inbound and straight through the DO for
 * channels REST cannot connect yet: contact creation, de-duplication by upstream id, the message.received event,
 * STOP/START handling and private contacts, and what D1 is asked per message: three statements in the account's
 * batch, no read-back (a burst mixing new, duplicate and private messages keeps each one's outcome).
 */
import { env, runInDurableObject } from 'cloudflare:test'
import { afterAll, describe, expect, it } from 'vitest'
import type { MessageEvent } from '../../../schema/events'
import { ingestMessages, type InboundItem } from '../../../worker/account/ingest'
import { INBOUND_TALLY_DELAY_MS, Totals, totalsOf } from '../../../worker/account/totals'
import { contactIdFor } from '../../../worker/lib/ids'
import { accountStub } from '../../../worker/lib/objects'
import { meterEveryD1 } from '../d1-meter'
import { body, call, connectCustom, getMessageVia, newTenant, pushInbound, send, type TestTenant } from '../helpers'
import { accountContextOf, addAccount, contactRow, eventsOf, ingestVia, setContactFlags } from '../state'

const meter = meterEveryD1(env.DB)
afterAll(() => meter.restore())

async function customTenant() {
  const t = await newTenant()
  await connectCustom(t)
  return t
}

describe('inbound on the custom channel', () => {
  it('creates the contact on its first message, with external id, names and email', async () => {
    const t = await customTenant()
    const r = await pushInbound(t, { body: 'Hello there', fromId: 'crm-42', firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ success: true, message_id: expect.stringMatching(/^msg_/), contact_id: expect.stringMatching(/^con_/), duplicate: false })
    const contact = await contactRow(t.tenantId, String(r.body.contact_id))
    expect(contact).toMatchObject({
      accountId: 'custom',
      channel: 'custom',
      externalId: 'crm-42',
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
    })
    expect(contact?.firstInboundAt).not.toBeNull()

    const m = await getMessageVia(t, String(r.body.message_id))
    expect(m.body).toMatchObject({
      direction: 'inbound',
      status: 'received',
      text: 'Hello there',
      account_id: 'custom',
      error: null,
      media: null,
      contact: { id: r.body.contact_id, phone: null, name: 'Ada Lovelace', external_id: 'crm-42' },
    })
  })

  it('reuses the contact for the same fromId, keeping names a later push omits and taking new ones', async () => {
    const t = await customTenant()
    const first = await pushInbound(t, { body: 'one', fromId: 'u-1', firstName: 'Grace' })
    const second = await pushInbound(t, { body: 'two', fromId: 'u-1' })
    expect(second.body.contact_id).toBe(first.body.contact_id)
    expect((await contactRow(t.tenantId, String(first.body.contact_id)))?.firstName).toBe('Grace')
    await pushInbound(t, { body: 'three', fromId: 'u-1', firstName: 'Grace', lastName: 'Hopper' })
    expect((await getMessageVia(t, String(second.body.message_id))).body.contact.name).toBe('Grace Hopper')
  })

  it('accepts numeric ids from the bridge as strings', async () => {
    const t = await customTenant()
    const r = await call('/v1/channels/custom/inbound', { method: 'POST', key: t.key, json: { customData: { body: 'hi', fromId: 12345, messageSid: 99 } } })
    expect(r.status).toBe(200)
    const id = String((await body(r)).contact_id)
    expect(id).toBe(await contactIdFor(t.tenantId, 'custom', { kind: 'external', value: '12345' }))
  })

  it('stores media with its content type', async () => {
    const t = await customTenant()
    const r = await call('/v1/channels/custom/inbound', {
      method: 'POST',
      key: t.key,
      json: { customData: { body: '', fromId: 'pic', mediaUrl: 'https://cdn.example.com/a.jpg', mediaContentType: 'image/jpeg' } },
    })
    expect(r.status).toBe(200)
    const m = await getMessageVia(t, String((await body(r)).message_id))
    expect(m.body.media).toEqual({ url: 'https://cdn.example.com/a.jpg', content_type: 'image/jpeg' })
  })

  it('stores a repeated messageSid once and answers it as a duplicate with the first message id', async () => {
    const t = await customTenant()
    const first = await pushInbound(t, { body: 'once', fromId: 'd-1', messageSid: 'sid-77' })
    const again = await pushInbound(t, { body: 'once', fromId: 'd-1', messageSid: 'sid-77' })
    expect(again.body).toMatchObject({ message_id: first.body.message_id, contact_id: first.body.contact_id, duplicate: true })
    const list = await body<{ messages: unknown[] }>(await call('/v1/messages', { key: t.key }))
    expect(list.messages).toHaveLength(1)
    expect(await eventsOf(t.tenantId, 'message.received')).toHaveLength(1)
  })

  it('stores concurrent pushes of one messageSid once', async () => {
    const t = await customTenant()
    const results = await Promise.all(Array.from({ length: 5 }, () => pushInbound(t, { body: 'race', fromId: 'r-1', messageSid: 'sid-race' })))
    expect(results.every((r) => r.status === 200)).toBe(true)
    expect(new Set(results.map((r) => r.body.message_id)).size).toBe(1)
    expect(results.filter((r) => r.body.duplicate === false)).toHaveLength(1)
    expect(await eventsOf(t.tenantId, 'message.received')).toHaveLength(1)
  })

  it('treats the same messageSid from another tenant as a different message', async () => {
    const a = await customTenant()
    const b = await customTenant()
    const ra = await pushInbound(a, { body: 'x', fromId: 'same', messageSid: 'shared-sid' })
    const rb = await pushInbound(b, { body: 'x', fromId: 'same', messageSid: 'shared-sid' })
    expect(rb.body.duplicate).toBe(false)
    expect(rb.body.message_id).not.toBe(ra.body.message_id)
    expect(rb.body.contact_id).not.toBe(ra.body.contact_id)
  })

  it('emits message.received with the exact payload of spec part 6', async () => {
    const t = await customTenant()
    const r = await pushInbound(t, { body: 'Ping', fromId: 'ev-1', firstName: 'Linus' })
    const [event] = await eventsOf(t.tenantId, 'message.received')
    expect(event?.accountId).toBe('custom')
    expect(event?.payload).toEqual({
      event: 'message.received',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      account_id: 'custom',
      channel: 'custom',
      message: { id: String(r.body.message_id), direction: 'inbound', text: 'Ping', media: null, status: 'received', error: null },
      contact: { id: String(r.body.contact_id), phone: null, name: 'Linus' },
    } satisfies MessageEvent)
  })

  it('marks the person do-not-disturb on STOP (sends refused) and lifts it on START', async () => {
    const t = await customTenant()
    await pushInbound(t, { body: ' stop ', fromId: 'quiet' })
    const refused = await send(t, { to: { external_id: 'quiet' }, text: 'are you there?' })
    expect(refused.status).toBe(422)
    expect(refused.body).toEqual({ error_code: 'contact_do_not_disturb', error: expect.any(String) })
    await pushInbound(t, { body: 'START', fromId: 'quiet' })
    expect((await send(t, { to: { external_id: 'quiet' }, text: 'welcome back' })).status).toBe(202)
  })

  it('does not treat STOP inside a sentence as an opt-out', async () => {
    const t = await customTenant()
    await pushInbound(t, { body: 'please stop by tomorrow', fromId: 'visitor' })
    expect((await send(t, { to: { external_id: 'visitor' }, text: 'will do' })).status).toBe(202)
  })

  it('does not store messages of a private contact and answers contact_private', async () => {
    const t = await customTenant()
    const first = await pushInbound(t, { body: 'hi', fromId: 'secret' })
    await setContactFlags(String(first.body.contact_id), { private: true })
    const r = await pushInbound(t, { body: 'do not keep this', fromId: 'secret' })
    expect(r.status).toBe(422)
    expect(r.body).toEqual({ success: false, error: expect.any(String), error_code: 422 })
    const list = await body<{ messages: { text: string }[] }>(await call('/v1/messages', { key: t.key }))
    expect(list.messages.map((m) => m.text)).toEqual(['hi'])
    expect(await eventsOf(t.tenantId, 'message.received')).toHaveLength(1)
  })

  it('restarts the loop guard of every person and counts every message of a concurrent burst', async () => {
    const t = await customTenant()
    const people = ['burst-a', 'burst-b']
    const sendTo = (p: string, text: string) => send(t, { to: { external_id: p }, text })
    for (const p of people) {
      expect((await pushInbound(t, { body: 'first', fromId: p, messageSid: `${p}-0` })).status).toBe(200)
      // Three sends since the person last wrote: the loop guard refuses the next one.
      for (const n of [1, 2, 3]) expect((await sendTo(p, `reply ${n}`)).status).toBe(202)
      expect((await sendTo(p, 'one too many')).body.error_code).toBe('loop_guard')
    }
    // Pushed together, so the AccountDO commits them in shared batches and writes its counters once per batch.
    const burst = Array.from({ length: 12 }, (_, i) => pushInbound(t, { body: `burst ${i}`, fromId: people[i % 2]!, messageSid: `b-${i}` }))
    for (const r of await Promise.all(burst)) expect(r.body.duplicate).toBe(false)
    expect((await pushInbound(t, { body: 'again', fromId: 'burst-a', messageSid: 'b-0' })).body.duplicate).toBe(true)
    const totals = await accountStub(env, t.tenantId, 'custom').totals()
    expect(totals.inbound).toBe(2 + 12)
    for (const p of people) {
      for (const n of [1, 2, 3]) expect((await sendTo(p, `after ${n}`)).status).toBe(202)
      expect((await sendTo(p, 'again too many')).body.error_code).toBe('loop_guard')
    }
    expect((await accountStub(env, t.tenantId, 'custom').totals()).outbound).toBe(12)
  })

  it('refuses inbound while the custom channel is not connected', async () => {
    const t = await newTenant()
    const r = await pushInbound(t, { body: 'hi', fromId: 'nobody' })
    expect(r.status).toBe(409)
    expect(r.body).toEqual({ success: false, error: expect.stringMatching(/not connected/), error_code: 409 })
  })
})

describe('inbound on an SMS account', () => {
  it('records STOP as an SMS opt-out, so sends answer contact_opted_out', async () => {
    const t = await newTenant()
    const ref = await addAccount(t.tenantId, { id: '+15550003333', channel: 'sms' })
    await ingestVia(ref, { phone: '+15557654321' }, 'STOP')
    const refused = await send(t, { account_id: '+15550003333', to: { phone: '+15557654321' }, text: 'one more thing' })
    expect(refused.status).toBe(422)
    expect(refused.body.error_code).toBe('contact_opted_out')
    const contact = await contactRow(t.tenantId, await contactIdFor(t.tenantId, '+15550003333', { kind: 'phone', value: '+15557654321' }))
    expect(contact).toMatchObject({ optedOut: true, doNotDisturb: false })
  })
})

/** An item of a custom-channel burst from `person`, under `upstreamId`. */
async function item(t: TestTenant, person: string, upstreamId: string, text: string): Promise<InboundItem> {
  const id = await contactIdFor(t.tenantId, 'custom', { kind: 'external', value: person })
  const contact = { id, tenantId: t.tenantId, accountId: 'custom', channel: 'custom' as const, externalId: person }
  return { contact, text, mediaUrl: null, mediaContentType: null, upstreamId }
}

/** Ingests `items` as one call of the account's object (a relay burst's path): one group commit for all of them. */
async function burst(t: TestTenant, items: InboundItem[]) {
  const ref = { tenantId: t.tenantId, accountId: 'custom', channel: 'custom' as const }
  return runInDurableObject(accountStub(env, t.tenantId, 'custom'), async (instance) => {
    const c = await accountContextOf(instance)
    let outcomes: Awaited<ReturnType<typeof ingestMessages>> = []
    const totals = await meter.measure(async () => {
      outcomes = await ingestMessages(c, ref, items)
    })
    return { outcomes, totals }
  })
}

describe('the inbound tally', () => {
  it('is stored a moment after the commit, not before its answer, and counted meanwhile', async () => {
    const t = await customTenant()
    const ref = { tenantId: t.tenantId, accountId: 'custom', channel: 'custom' as const }
    const first = [await item(t, 'tally-a', 'tally-1', 'first')]
    // The same person again: this commit changes nothing in the object's storage but the tally.
    const second = [await item(t, 'tally-a', 'tally-2', 'second')]
    await runInDurableObject(accountStub(env, t.tenantId, 'custom'), async (instance, state) => {
      const real = await accountContextOf(instance)
      const stored = () => {
        const row = state.storage.sql.exec<{ value: string }>("SELECT value FROM kv WHERE key = 'totals'").toArray()[0]
        return row ? Totals.parse(JSON.parse(row.value)).inbound : 0
      }
      const work: Promise<unknown>[] = []
      const timers: { ms: number; fire: () => void }[] = []
      const c = {
        ...real,
        background: (w: Promise<unknown>) => void work.push(w),
        later: (ms: number) => new Promise<void>((fire) => timers.push({ ms, fire })),
      }
      const fireAll = async () => {
        for (const timer of timers.splice(0)) timer.fire()
        await Promise.all(work.splice(0))
      }
      expect(await ingestMessages(c, ref, first)).toMatchObject([{ stored: true, duplicate: false }])
      await fireAll()
      expect(stored()).toBe(1)

      expect(await ingestMessages(c, ref, second)).toMatchObject([{ stored: true, duplicate: false }])
      // Answered with the tally in memory only, and one write of it scheduled.
      expect(stored()).toBe(1)
      expect(totalsOf(real.store).inbound).toBe(2)
      expect(timers.map((x) => x.ms)).toEqual([INBOUND_TALLY_DELAY_MS])
      await fireAll()
      expect(stored()).toBe(2)
      expect(totalsOf(real.store).inbound).toBe(2)
    })
  })
})

describe('the D1 statements of an inbound message', () => {
  it('stores a burst in one D1 batch of three statements per message, with no read after it', async () => {
    const t = await customTenant()
    await pushInbound(t, { body: 'warm-up', fromId: 'st-0', messageSid: 'st-warm' })
    const items = await Promise.all(Array.from({ length: 6 }, (_, i) => item(t, `st-${i % 2}`, `st-${i}`, `statement ${i}`)))
    const { outcomes, totals } = await burst(t, items)
    expect(outcomes.map((o) => o.stored && !o.duplicate)).toEqual(items.map(() => true))
    expect(totals).toMatchObject({ statements: 3 * items.length, roundTrips: 1 })
  })

  it('keeps each outcome of a burst mixing new, duplicate and private messages in one batch', async () => {
    const t = await customTenant()
    const old = await pushInbound(t, { body: 'stored before', fromId: 'mix-a', messageSid: 'mix-old' })
    const hidden = await pushInbound(t, { body: 'before private', fromId: 'mix-p', messageSid: 'mix-hidden-old' })
    await setContactFlags(String(hidden.body.contact_id), { private: true })
    const items = [
      await item(t, 'mix-a', 'mix-1', 'new one'),
      await item(t, 'mix-a', 'mix-old', 'stored before'),
      await item(t, 'mix-p', 'mix-p1', 'keep this private'),
      await item(t, 'mix-b', 'mix-2', 'new two'),
      await item(t, 'mix-a', 'mix-1', 'new one again'),
      await item(t, 'mix-p', 'mix-hidden-old', 'before private'),
    ]
    const { outcomes, totals } = await burst(t, items)
    const [first, , , second] = outcomes
    expect(outcomes).toEqual([
      { stored: true, messageId: expect.stringMatching(/^msg_/), contactId: items[0]!.contact.id, duplicate: false },
      { stored: true, messageId: old.body.message_id, contactId: old.body.contact_id, duplicate: true },
      { stored: false, contactId: items[2]!.contact.id, reason: 'contact_private' },
      { stored: true, messageId: expect.stringMatching(/^msg_/), contactId: items[3]!.contact.id, duplicate: false },
      // Repeated within the burst: a duplicate of the message the same batch stored a moment before.
      { stored: true, messageId: first?.stored ? first.messageId : '', contactId: items[0]!.contact.id, duplicate: true },
      // A message stored before its person was made private stays what it was: a re-push is a duplicate of it.
      { stored: true, messageId: hidden.body.message_id, contactId: hidden.body.contact_id, duplicate: true },
    ])
    expect(second?.stored && second.messageId).not.toBe(first?.stored && first.messageId)
    expect(totals).toMatchObject({ statements: 3 * items.length, roundTrips: 1 })
    const list = await body<{ messages: { text: string }[] }>(await call('/v1/messages?limit=10', { key: t.key }))
    expect(list.messages.map((m) => m.text).sort()).toEqual(['before private', 'new one', 'new two', 'stored before'])
    expect(await eventsOf(t.tenantId, 'message.received')).toHaveLength(4)
    expect((await accountStub(env, t.tenantId, 'custom').totals()).inbound).toBe(4)
  })

  it('answers a re-push as a duplicate of the first message and hands it to no wait again', async () => {
    const t = await customTenant()
    const start = await body<{ cursor: string }>(await call('/v1/messages/wait?timeout_s=0', { key: t.key }))
    const first = await pushInbound(t, { body: 'only once', fromId: 'w-1', messageSid: 'w-sid' })
    const got = await body<{ messages: { id: string }[]; cursor: string }>(await call(`/v1/messages/wait?timeout_s=5&cursor=${start.cursor}`, { key: t.key }))
    expect(got.messages.map((m) => m.id)).toEqual([first.body.message_id])
    // Opened before the re-push: it must not be answered with the duplicate, only with the next new message.
    const next = call(`/v1/messages/wait?timeout_s=5&cursor=${got.cursor}`, { key: t.key })
    const again = await pushInbound(t, { body: 'only once', fromId: 'w-1', messageSid: 'w-sid' })
    expect(again.body).toMatchObject({ message_id: first.body.message_id, contact_id: first.body.contact_id, duplicate: true })
    const later = await pushInbound(t, { body: 'a new one', fromId: 'w-1', messageSid: 'w-sid-2' })
    const answered = await body<{ messages: { id: string }[] }>(await next)
    expect(answered.messages.map((m) => m.id)).toEqual([later.body.message_id])
  })

  it('hands a woken wait the quote as stored: our id for a message we have, the network’s for one we do not', async () => {
    const t = await customTenant()
    const quoted = await pushInbound(t, { body: 'the original', fromId: 'wq-a', messageSid: 'wq-old' })
    const start = await body<{ cursor: string }>(await call('/v1/messages/wait?timeout_s=0', { key: t.key }))
    type Answer = { messages: { id: string; reply_to?: string | null }[]; cursor: string }
    // Opened before each push, so it is answered from the commit itself, not by a read of D1.
    const waitFor = (cursor: string) => call(`/v1/messages/wait?timeout_s=5&cursor=${cursor}`, { key: t.key }).then((r) => body<Answer>(r))
    const woken = waitFor(start.cursor)
    const known = await pushInbound(t, { body: 'quoting ours', fromId: 'wq-a', messageSid: 'wq-1', replyTo: 'wq-old' })
    const first = await woken
    expect(first.messages).toEqual([expect.objectContaining({ id: known.body.message_id, reply_to: quoted.body.message_id })])
    const wokenAgain = waitFor(first.cursor)
    const unknown = await pushInbound(t, { body: 'quoting elsewhere', fromId: 'wq-a', messageSid: 'wq-2', replyTo: 'wq-never-seen' })
    const second = await wokenAgain
    expect(second.messages).toEqual([expect.objectContaining({ id: unknown.body.message_id, reply_to: 'wq-never-seen' })])
    // Field for field what a read of D1 gives.
    const reread = await body<Answer>(await call(`/v1/messages/wait?timeout_s=0&cursor=${start.cursor}`, { key: t.key }))
    expect(reread.messages).toEqual([...first.messages, ...second.messages])
  })

  it('gives a reply its quote in one batch with plain messages: our id when stored, else the network’s, and none on the others', async () => {
    const t = await customTenant()
    const quotedPush = await pushInbound(t, { body: 'the original', fromId: 'rq-a', messageSid: 'rq-old' })
    const items = [
      { ...(await item(t, 'rq-a', 'rq-1', 'plain before')) },
      { ...(await item(t, 'rq-a', 'rq-2', 'quoting a stored one')), replyTo: 'rq-old' },
      { ...(await item(t, 'rq-b', 'rq-3', 'quoting an unknown one')), replyTo: 'rq-never-seen' },
      { ...(await item(t, 'rq-b', 'rq-4', 'plain after')) },
    ]
    const { outcomes, totals } = await burst(t, items)
    expect(outcomes.map((o) => o.stored && !o.duplicate)).toEqual([true, true, true, true])
    expect(totals).toMatchObject({ statements: 3 * items.length, roundTrips: 1 })
    const received = new Map(
      (await eventsOf(t.tenantId, 'message.received')).flatMap(({ payload }) => ('message' in payload ? [[payload.message.text, payload.message]] : []))
    )
    expect(received.get('plain before')).not.toHaveProperty('reply_to')
    expect(received.get('quoting a stored one')).toMatchObject({ reply_to: quotedPush.body.message_id })
    expect(received.get('quoting an unknown one')).toMatchObject({ reply_to: 'rq-never-seen' })
    expect(received.get('plain after')).not.toHaveProperty('reply_to')
    const stored = await getMessageVia(t, String(outcomes[1]?.stored && outcomes[1].messageId))
    expect(stored.body).toMatchObject({ reply_to: quotedPush.body.message_id })
  })
})
