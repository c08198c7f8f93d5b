// The page inbox end to end: signed webhooks in (page and Instagram), replies out on the surface the person wrote
// on, the 24-hour window, needs_inbound_first, echoes, receipts that only move forward, and a revoked token.
import { and, eq } from 'drizzle-orm'
import { describe, expect, inject, it } from 'vitest'
import { contacts } from '../../../../schema/d1'
import { contactIdFor } from '../../../../worker/lib/ids'
import { fakeGraphCdn } from '../../../fixtures/fake-graph-types'
import { body, call, getMessageVia, send, settled } from '../../helpers'
import { db, eventsOf } from '../../state'
import { connectPage, deliverWebhook, PAGE_A, PAGE_B, postWebhook, socialStatus } from './social-helpers'

const PSID = '24000000000000001'
const IGSID = '17000000000000002'
const IG = PAGE_A.instagram!.id

async function inboundList(t: { key: string }) {
  return (
    await body<{ messages: { id: string; text: string; contact: { id: string; name: string | null } }[] }>(
      await call('/v1/messages?direction=inbound', { key: t.key })
    )
  ).messages
}

describe('the page-inbox webhook', () => {
  it('answers the verification handshake with the challenge for its own verify token only', async () => {
    const ctx = await connectPage()
    const q = (token: string) => `${ctx.webhookPath}?hub.mode=subscribe&hub.verify_token=${token}&hub.challenge=1158201444`
    const ok = await call(q(ctx.app.verify_token))
    expect(ok.status).toBe(200)
    expect(await ok.text()).toBe('1158201444')
    expect((await call(q('wrong'))).status).toBe(403)
    expect((await call('/v1/channels/meta/webhooks/unknown?hub.mode=subscribe&hub.verify_token=x&hub.challenge=1')).status).toBe(403)
  })

  it('stores a page message as inbound with the person’s page-scoped id and name, once however often it is replayed', async () => {
    const ctx = await connectPage()
    const hook = await ctx.graph.webhook({
      kind: 'message',
      surface: 'page',
      owner_id: PAGE_A.id,
      sender_id: PSID,
      sender_name: 'Ada Lovelace',
      text: 'Do you have rye bread?',
      mid: 'm_page_1',
    })
    const first = await postWebhook(ctx.webhookPath, hook.body, hook.signature)
    expect(first).toMatchObject({ status: 200, body: { stored: 1 } })
    const replay = await postWebhook(ctx.webhookPath, hook.body, hook.signature)
    expect(replay).toMatchObject({ status: 200, body: { stored: 0, duplicates: 1 } })
    const got = await inboundList(ctx.t)
    expect(got).toHaveLength(1)
    expect(got[0]).toMatchObject({
      text: 'Do you have rye bread?',
      account_id: PAGE_A.id,
      status: 'received',
      contact: { id: await contactIdFor(ctx.t.tenantId, PAGE_A.id, { kind: 'social', value: PSID }), name: 'Ada Lovelace' },
    })
    const events = await eventsOf(ctx.t.tenantId, 'message.received')
    expect(events).toHaveLength(1)
  })

  it('refuses a forged signature, a missing one and a legacy sha1 one with 403, and stores nothing', async () => {
    const ctx = await connectPage()
    const hook = await ctx.graph.webhook({ kind: 'message', surface: 'page', owner_id: PAGE_A.id, sender_id: PSID, text: 'hi' })
    const forged = await postWebhook(ctx.webhookPath, hook.body, `sha256=${'0'.repeat(64)}`)
    expect(forged.status).toBe(403)
    // The right signature over different bytes (a re-serialised body) does not pass either.
    const reserialised = JSON.stringify(JSON.parse(hook.body), null, 1)
    expect((await postWebhook(ctx.webhookPath, reserialised, hook.signature)).status).toBe(403)
    expect((await postWebhook(ctx.webhookPath, hook.body, null)).status).toBe(403)
    expect((await postWebhook(ctx.webhookPath, hook.body, hook.signature.replace('sha256=', 'sha1='))).status).toBe(403)
    expect(await inboundList(ctx.t)).toEqual([])
  })

  it('acknowledges a signed payload of another object or shape and stores nothing', async () => {
    const ctx = await connectPage()
    for (const payload of [
      { object: 'whatsapp_business_account', entry: [] },
      { object: 'page', entry: [{ id: PAGE_A.id, changes: [{ field: 'feed' }] }] },
      { object: 'page', entry: 'v2' },
    ]) {
      const hook = await ctx.graph.webhook({ kind: 'raw', payload })
      expect((await postWebhook(ctx.webhookPath, hook.body, hook.signature)).status).toBe(200)
    }
    expect(await inboundList(ctx.t)).toEqual([])
  })

  it('ignores messages to a page that is not connected here', async () => {
    const ctx = await connectPage()
    const r = await deliverWebhook(ctx, { kind: 'message', surface: 'page', owner_id: PAGE_B.id, sender_id: PSID, text: 'hello?' })
    expect(r.body).toMatchObject({ stored: 0, ignored: 1 })
  })
})

describe('replies on the page inbox', () => {
  it('go out on the surface each person wrote on: the page and the linked Instagram account', async () => {
    const ctx = await connectPage()
    await deliverWebhook(ctx, { kind: 'message', surface: 'page', owner_id: PAGE_A.id, sender_id: PSID, text: 'page hello' })
    await deliverWebhook(ctx, {
      kind: 'message',
      surface: 'instagram',
      owner_id: IG,
      sender_id: IGSID,
      sender_name: 'grace',
      text: 'ig hello',
      attachment_url: await fakeGraphCdn.put(inject('fakeGraphUrl'), { content_type: 'image/jpeg', data_base64: Buffer.from('jpeg').toString('base64') }),
    })
    // The photo is fetched into the media store after the webhook's answer; the message follows it.
    let inbound = await inboundList(ctx.t)
    for (let i = 0; i < 500 && inbound.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 10))
      inbound = await inboundList(ctx.t)
    }
    expect(inbound.map((m) => m.text).sort()).toEqual(['ig hello', 'page hello'])
    const igMessage = inbound.find((m) => m.text === 'ig hello')!
    expect(igMessage).toMatchObject({
      media: { url: expect.stringMatching(/\/media\/med_/), content_type: 'image/jpeg', kind: 'image' },
      contact: { name: 'grace' },
    })

    const toPage = await send(ctx.t, { to: { social_id: PSID }, text: 'Yes, until 6pm' })
    expect(toPage.status).toBe(202)
    const toIg = await send(ctx.t, { to: { contact_id: igMessage.contact.id }, text: 'Thanks!', media_url: 'https://cdn.example/menu.png' })
    expect(toIg.status).toBe(202)
    const a = await settled(ctx.t, String(toPage.body.message_id))
    const b = await settled(ctx.t, String(toIg.body.message_id))
    expect([a.status, b.status]).toEqual(['sent', 'sent'])
    const sent = await ctx.graph.sent()
    expect(sent.map((s) => [s.surface, s.recipient_id, s.text, s.attachment?.type ?? null])).toEqual([
      ['page', PSID, 'Yes, until 6pm', null],
      ['instagram', IGSID, null, 'image'],
      ['instagram', IGSID, 'Thanks!', null],
    ])
    const stored = await db
      .select()
      .from(contacts)
      .where(and(eq(contacts.tenantId, ctx.t.tenantId), eq(contacts.socialId, IGSID)))
      .get()
    expect(stored?.peerId).toBe(`instagram:${IGSID}`)
  })

  it('answer 409 needs_inbound_first for a person who never wrote, by social_id and by contact_id', async () => {
    const ctx = await connectPage()
    const bySocial = await send(ctx.t, { to: { social_id: '999' }, text: 'hi' })
    expect(bySocial).toMatchObject({ status: 409, body: { error_code: 'needs_inbound_first' } })
    // A contact the account knows but who never wrote (e.g. created by an import): refused the same way.
    const id = await contactIdFor(ctx.t.tenantId, PAGE_A.id, { kind: 'social', value: '998' })
    const now = Date.now()
    await db
      .insert(contacts)
      .values({ id, tenantId: ctx.t.tenantId, accountId: PAGE_A.id, channel: 'social', socialId: '998', peerId: 'page:998', createdAt: now, updatedAt: now })
    const byContact = await send(ctx.t, { to: { contact_id: id }, text: 'hi' })
    expect(byContact).toMatchObject({ status: 409, body: { error_code: 'needs_inbound_first' } })
    expect(await ctx.graph.sent()).toEqual([])
  })

  it('answer 409 outside_window more than 24 hours after the person’s last message, and pass just inside it', async () => {
    const ctx = await connectPage()
    await deliverWebhook(ctx, { kind: 'message', surface: 'page', owner_id: PAGE_A.id, sender_id: PSID, text: 'hello' })
    const id = await contactIdFor(ctx.t.tenantId, PAGE_A.id, { kind: 'social', value: PSID })
    const wroteAt = async (msAgo: number) =>
      db
        .update(contacts)
        .set({ lastInboundAt: Date.now() - msAgo })
        .where(eq(contacts.id, id))
    await wroteAt(24 * 3_600_000 + 60_000)
    const late = await send(ctx.t, { to: { social_id: PSID }, text: 'sorry for the wait' })
    expect(late).toMatchObject({ status: 409, body: { error_code: 'outside_window' } })
    await wroteAt(24 * 3_600_000 - 60_000)
    expect((await send(ctx.t, { to: { contact_id: id }, text: 'just in time' })).status).toBe(202)
  })

  it('carry the provider’s refusal and code in error (the provider’s own window)', async () => {
    const ctx = await connectPage()
    await deliverWebhook(ctx, { kind: 'message', surface: 'page', owner_id: PAGE_A.id, sender_id: PSID, text: 'hello' })
    // The provider's clock has moved past its window while ours has not: its refusal is what the message shows.
    await ctx.graph.setClock(Date.now() + 25 * 3_600_000)
    const r = await send(ctx.t, { to: { social_id: PSID }, text: 'late' })
    const m = await settled(ctx.t, String(r.body.message_id))
    expect(m).toMatchObject({ status: 'failed', error: { code: 10, message: expect.stringContaining('outside of allowed window') } })
  })

  it('are not stored twice when the provider echoes them, and delivery and read move their status forward only', async () => {
    const ctx = await connectPage()
    await deliverWebhook(ctx, { kind: 'message', surface: 'page', owner_id: PAGE_A.id, sender_id: PSID, text: 'hello' })
    const r = await send(ctx.t, { to: { social_id: PSID }, text: 'hi there' })
    await settled(ctx.t, String(r.body.message_id))
    const [out] = await ctx.graph.sent()
    const echo = await deliverWebhook(ctx, { kind: 'echo', surface: 'page', owner_id: PAGE_A.id, sender_id: PSID, mid: out!.message_id, text: 'hi there' })
    expect(echo.body).toMatchObject({ stored: 0, ignored: 1 })
    const all = await body<{ messages: unknown[] }>(await call('/v1/messages', { key: ctx.t.key }))
    expect(all.messages).toHaveLength(2)

    await deliverWebhook(ctx, { kind: 'read', surface: 'page', owner_id: PAGE_A.id, sender_id: PSID, watermark: Date.now() + 1000 })
    expect((await getMessageVia(ctx.t, String(r.body.message_id))).body.status).toBe('read')
    // A late delivery callback after the read changes nothing.
    const late = await deliverWebhook(ctx, { kind: 'delivery', surface: 'page', owner_id: PAGE_A.id, sender_id: PSID, mids: [out!.message_id] })
    expect(late.body).toMatchObject({ receipts: 0 })
    expect((await getMessageVia(ctx.t, String(r.body.message_id))).body.status).toBe('read')
    expect((await eventsOf(ctx.t.tenantId)).map((e) => e.type).filter((t) => t.startsWith('message.'))).toEqual([
      'message.received',
      'message.sent',
      'message.read',
    ])
  })

  it('mark delivered, then read by message id on Instagram', async () => {
    const ctx = await connectPage()
    await deliverWebhook(ctx, { kind: 'message', surface: 'instagram', owner_id: IG, sender_id: IGSID, text: 'hey' })
    const r = await send(ctx.t, { to: { social_id: IGSID }, text: 'hello' })
    await settled(ctx.t, String(r.body.message_id))
    const [out] = await ctx.graph.sent()
    await deliverWebhook(ctx, { kind: 'delivery', surface: 'page', owner_id: PAGE_A.id, sender_id: IGSID, mids: [out!.message_id] })
    expect((await getMessageVia(ctx.t, String(r.body.message_id))).body.status).toBe('delivered')
    await deliverWebhook(ctx, { kind: 'read', surface: 'instagram', owner_id: IG, sender_id: IGSID, mid: out!.message_id })
    expect((await getMessageVia(ctx.t, String(r.body.message_id))).body.status).toBe('read')
  })

  it('turn the account disconnected with a reason and account.disconnected once the provider revoked the token', async () => {
    const ctx = await connectPage()
    await deliverWebhook(ctx, { kind: 'message', surface: 'page', owner_id: PAGE_A.id, sender_id: PSID, text: 'hello' })
    await ctx.graph.revoke()
    const r = await send(ctx.t, { to: { social_id: PSID }, text: 'hi' })
    const m = await settled(ctx.t, String(r.body.message_id))
    expect(m).toMatchObject({ status: 'failed', error: { code: 190 } })
    const accounts = await body<{ accounts: { id: string; status: string }[] }>(await call('/v1/accounts', { key: ctx.t.key }))
    expect(accounts.accounts).toMatchObject([{ id: PAGE_A.id, status: 'disconnected' }])
    expect((await eventsOf(ctx.t.tenantId, 'account.disconnected')).map((e) => e.payload)).toMatchObject([
      { account: { id: PAGE_A.id, reason: 'token_revoked' } },
    ])
    expect(await socialStatus(ctx.t)).toMatchObject({ status: 'failed', reason: 'token_revoked' })
    expect((await send(ctx.t, { account_id: PAGE_A.id, to: { social_id: PSID }, text: 'again' })).body).toMatchObject({ error_code: 'account_not_connected' })
  })
})
