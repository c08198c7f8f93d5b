// The page inbox's chat actions (issue 25) against the fake Graph API: quoted replies as `reply_to.mid`, reactions as
// the `react`/`unreact` sender actions, typing as `typing_on`, read marks as `mark_seen`, no lookup (422), Graph's
// refusals (outside the window, an unknown mid) and its 368 as the `policy_block` ban-risk signal.
import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { contacts } from '../../../../schema/d1'
import { contactIdFor } from '../../../../worker/lib/ids'
import { body, call, send, settled } from '../../helpers'
import { db, eventsOf } from '../../state'
import { connectPage, deliverWebhook, PAGE_A, postWebhook } from './social-helpers'

const PSID = '24000000000000101'
const IG = PAGE_A.instagram!.id
const IGSID = '17000000000000102'

type Ctx = Awaited<ReturnType<typeof connectPage>>

const post = (ctx: Ctx, path: string, json?: unknown) => call(path, { method: 'POST', key: ctx.t.key, ...(json === undefined ? {} : { json }) })

/** The person writes `mid`; answers our id of the stored message. */
async function personWrites(ctx: Ctx, mid: string, surface: 'page' | 'instagram' = 'page', sender = PSID): Promise<string> {
  const owner = surface === 'page' ? PAGE_A.id : IG
  expect((await deliverWebhook(ctx, { kind: 'message', surface, owner_id: owner, sender_id: sender, text: `hello ${mid}`, mid })).body).toMatchObject({
    stored: 1,
  })
  const list = await body<{ messages: { id: string; text: string }[] }>(await call('/v1/messages?direction=inbound', { key: ctx.t.key }))
  return list.messages.find((m) => m.text === `hello ${mid}`)!.id
}

async function accountRisk(ctx: Ctx) {
  const list = await body<{ accounts: { id: string; risk: { at_risk: boolean; signals: { signal: string }[] } }[] }>(
    await call('/v1/accounts', { key: ctx.t.key })
  )
  return list.accounts.find((a) => a.id === PAGE_A.id)!.risk
}

describe('quoted replies on the page inbox', () => {
  it('send reply_to.mid of the quoted message, the person’s or our own, on the first part only', async () => {
    const ctx = await connectPage()
    const theirs = await personWrites(ctx, 'm_q_1')
    const first = await send(ctx.t, { to: { social_id: PSID }, text: 'About that', reply_to: theirs })
    expect(first.status, JSON.stringify(first.body)).toBe(202)
    expect(await settled(ctx.t, String(first.body.message_id))).toMatchObject({ status: 'sent' })
    const ours = String(first.body.message_id)
    const second = await send(ctx.t, { to: { social_id: PSID }, text: 'and the menu', media_url: 'https://cdn.example/menu.png', reply_to: ours })
    expect(await settled(ctx.t, String(second.body.message_id))).toMatchObject({ status: 'sent' })
    const sent = await ctx.graph.sent()
    expect(sent.map((s) => [s.text, s.attachment?.type ?? null, s.reply_to])).toEqual([
      ['About that', null, 'm_q_1'],
      [null, 'image', sent[0]!.message_id],
      ['and the menu', null, null],
    ])
  })

  it('quote on Instagram the same way', async () => {
    const ctx = await connectPage()
    const theirs = await personWrites(ctx, 'm_q_ig', 'instagram', IGSID)
    const r = await send(ctx.t, { to: { social_id: IGSID }, text: 'Yes', reply_to: theirs })
    expect(await settled(ctx.t, String(r.body.message_id))).toMatchObject({ status: 'sent' })
    expect((await ctx.graph.sent()).map((s) => [s.surface, s.reply_to])).toEqual([['instagram', 'm_q_ig']])
  })
})

describe('POST /v1/messages/{id}/reactions on the page inbox', () => {
  it('reacts with sender_action react and takes it back with unreact, on the person’s message and on ours', async () => {
    const ctx = await connectPage()
    const theirs = await personWrites(ctx, 'm_r_1')
    const reacted = await post(ctx, `/v1/messages/${theirs}/reactions`, { emoji: '❤️' })
    expect(reacted.status, await reacted.clone().text()).toBe(200)
    expect((await body(await call(`/v1/messages/${theirs}`, { key: ctx.t.key }))).reactions).toEqual([{ emoji: '❤️', from: 'me', at: expect.any(String) }])
    expect((await call(`/v1/messages/${theirs}/reactions`, { method: 'DELETE', key: ctx.t.key })).status).toBe(200)
    const r = await send(ctx.t, { to: { social_id: PSID }, text: 'Fresh bread at 8' })
    await settled(ctx.t, String(r.body.message_id))
    expect((await post(ctx, `/v1/messages/${String(r.body.message_id)}/reactions`, { emoji: '👍' })).status).toBe(200)
    const [out] = await ctx.graph.sent()
    expect((await ctx.graph.actions()).map((a) => [a.sender_action, a.recipient_id, a.message_id, a.reaction])).toEqual([
      ['react', PSID, 'm_r_1', '❤️'],
      ['unreact', PSID, 'm_r_1', null],
      ['react', PSID, out!.message_id, '👍'],
    ])
  })

  it('answers 422 action_refused when Graph does not know the message, and stores no reaction', async () => {
    const ctx = await connectPage()
    await personWrites(ctx, 'm_r_known')
    // A message Graph never delivered to this conversation (here: signed with the app's secret but never sent by Graph).
    const forged = {
      object: 'page',
      entry: [
        {
          id: PAGE_A.id,
          messaging: [{ sender: { id: PSID }, recipient: { id: PAGE_A.id }, timestamp: Date.now(), message: { mid: 'm_unknown', text: 'ghost' } }],
        },
      ],
    }
    const hook = await ctx.graph.webhook({ kind: 'raw', payload: forged })
    expect((await postWebhook(ctx.webhookPath, hook.body, hook.signature)).body).toMatchObject({ stored: 1 })
    const list = await body<{ messages: { id: string; text: string }[] }>(await call('/v1/messages?direction=inbound', { key: ctx.t.key }))
    const ghost = list.messages.find((m) => m.text === 'ghost')!.id
    const refused = await post(ctx, `/v1/messages/${ghost}/reactions`, { emoji: '👍' })
    expect(refused.status).toBe(422)
    expect(await body(refused)).toMatchObject({ error_code: 'action_refused', error: expect.stringContaining('message_id') })
    expect((await body(await call(`/v1/messages/${ghost}`, { key: ctx.t.key }))).reactions ?? []).toEqual([])
    expect(await ctx.graph.actions()).toEqual([])
  })
})

describe('typing and read marks on the page inbox', () => {
  it('send typing_on for POST /accounts/{id}/typing and mark_seen for POST /messages/{id}/read', async () => {
    const ctx = await connectPage()
    const theirs = await personWrites(ctx, 'm_t_1')
    const typing = await post(ctx, `/v1/accounts/${PAGE_A.id}/typing`, { to: { social_id: PSID } })
    expect(typing.status, await typing.clone().text()).toBe(200)
    expect((await post(ctx, `/v1/messages/${theirs}/read`)).status).toBe(200)
    expect((await ctx.graph.actions()).map((a) => [a.sender_action, a.surface, a.recipient_id, a.message_id])).toEqual([
      ['typing_on', 'page', PSID, null],
      ['mark_seen', 'page', PSID, null],
    ])
    // Nothing was sent as a message, and no send was counted.
    expect(await ctx.graph.sent()).toEqual([])
  })

  it('answer 409 outside_window once Graph’s 24-hour window has closed, and Graph took nothing', async () => {
    const ctx = await connectPage()
    const theirs = await personWrites(ctx, 'm_t_late')
    await ctx.graph.setClock(Date.now() + 25 * 3_600_000)
    const typing = await post(ctx, `/v1/accounts/${PAGE_A.id}/typing`, { to: { social_id: PSID } })
    expect(typing.status).toBe(409)
    expect(await body(typing)).toMatchObject({ error_code: 'outside_window' })
    expect(await body(await post(ctx, `/v1/messages/${theirs}/reactions`, { emoji: '👍' }))).toMatchObject({ error_code: 'outside_window' })
    expect(await ctx.graph.actions()).toEqual([])
  })

  it('answer 409 outside_window by the service’s own record of the window, without asking Graph, and pass just inside it', async () => {
    const ctx = await connectPage()
    await personWrites(ctx, 'm_t_ours')
    const id = await contactIdFor(ctx.t.tenantId, PAGE_A.id, { kind: 'social', value: PSID })
    const wroteAt = (msAgo: number) =>
      db
        .update(contacts)
        .set({ lastInboundAt: Date.now() - msAgo })
        .where(eq(contacts.id, id))
    await wroteAt(24 * 3_600_000 + 60_000)
    expect(await body(await post(ctx, `/v1/accounts/${PAGE_A.id}/typing`, { to: { social_id: PSID } }))).toMatchObject({ error_code: 'outside_window' })
    expect(await ctx.graph.actions()).toEqual([])
    await wroteAt(24 * 3_600_000 - 60_000)
    expect((await post(ctx, `/v1/accounts/${PAGE_A.id}/typing`, { to: { social_id: PSID } })).status).toBe(200)
    expect((await ctx.graph.actions()).map((a) => a.sender_action)).toEqual(['typing_on'])
  })
})

describe('lookups on the page inbox', () => {
  it('answer 422 unsupported_on_channel naming the page inbox', async () => {
    const ctx = await connectPage()
    const lookup = await call(`/v1/accounts/${PAGE_A.id}/lookup?phone=%2B447700900123`, { key: ctx.t.key })
    expect(lookup.status).toBe(422)
    const answer = await body(lookup)
    expect(answer).toMatchObject({ error_code: 'unsupported_on_channel' })
    expect(String(answer.error)).toMatch(/page inbox|social/i)
  })
})

describe('Graph error 368 on the page inbox', () => {
  it('fails the send with code 368, raises account.at_risk policy_block once, and shows risk on the account', async () => {
    const ctx = await connectPage()
    await personWrites(ctx, 'm_b_1')
    expect((await accountRisk(ctx)).at_risk).toBe(false)
    await ctx.graph.block(2)
    const r = await send(ctx.t, { to: { social_id: PSID }, text: 'Buy now!' })
    expect(await settled(ctx.t, String(r.body.message_id))).toMatchObject({ status: 'failed', error: { code: 368 } })
    // A sender action Graph blocks the same way keeps the signal in force without a second event.
    expect((await post(ctx, `/v1/accounts/${PAGE_A.id}/typing`, { to: { social_id: PSID } })).status).toBe(422)
    const events = await eventsOf(ctx.t.tenantId, 'account.at_risk')
    expect(events).toHaveLength(1)
    expect(events[0]!.payload).toMatchObject({ signal: 'policy_block' })
    expect(await accountRisk(ctx)).toMatchObject({ at_risk: true, signals: [{ signal: 'policy_block' }] })
    expect(await ctx.graph.sent()).toEqual([])
  })
})
