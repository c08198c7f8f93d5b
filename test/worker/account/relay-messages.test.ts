/**
 * Messages over the relay link, on the AccountDO side: inbound stored once and acked after the commit, sends
 * handed to the relay and moved by its reports and the upstream's receipts (forward only), the 10-minute
 * relay_unavailable failure, the encrypted session store, and contact import.
 */
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { describe, expect, it, vi } from 'vitest'
import { accountStub } from '../../../worker/lib/objects'
import { body, call, newTenant, send, type TestTenant } from '../helpers'
import { closeRelaysAfterEach, FakeRelay, issueRelay, uniquePhone } from '../relay-helpers'

const relays = closeRelaysAfterEach()

const newPhone = () => uniquePhone('1666')

async function linkedAccount(opts: Record<string, unknown> = {}) {
  const t = await newTenant()
  const { token } = await issueRelay(t.tenantId)
  const relay = await FakeRelay.open(token)
  relays.push(relay)
  const phone = newPhone()
  const res = await call('/v1/channels/alpha-web/connections', { method: 'POST', key: t.key, json: { phone_number: phone, ...opts } })
  expect(res.status).toBe(200)
  const assign = await relay.next('assign', (a) => a.account.accountId === phone)
  expect(await relay.state(assign, { state: 'connected', identifier: phone, upstreamUserId: null })).toMatchObject({ type: 'ack' })
  return { t, relay, phone, assign, token }
}

function inbound(relay: FakeRelay, a: { sid: string; fence: number }, upstreamId: string, from: { phone: string; lid?: string; name?: string }, text: string) {
  return relay.request({
    type: 'inbound',
    id: relay.id(),
    sid: a.sid,
    fence: a.fence,
    message: {
      upstreamId,
      from: { id: from.lid ?? `${from.phone.slice(1)}@s.whatsapp.net`, phone: from.phone, lid: from.lid ?? null, name: from.name ?? null },
      text,
      media: null,
      sentAt: Date.now(),
    },
  })
}

async function messages(t: TestTenant) {
  return (await body<{ messages: Array<Record<string, unknown> & { contact: Record<string, unknown> }> }>(await call('/v1/messages', { key: t.key }))).messages
}

async function eventTypes(tenantId: string) {
  const r = await env.DB.prepare('SELECT type FROM events WHERE tenant_id = ? ORDER BY created_at, rowid').bind(tenantId).all<{ type: string }>()
  return r.results.map((e) => e.type)
}

describe('inbound frames', () => {
  it('store the message once, ack after the commit, and ignore a resend of the same upstream id', async () => {
    const { t, relay, assign } = await linkedAccount()
    expect(await inbound(relay, assign, 'UP1', { phone: '+447700900123', name: 'Ada' }, 'Hello there')).toMatchObject({ type: 'ack' })
    expect(await inbound(relay, assign, 'UP1', { phone: '+447700900123', name: 'Ada' }, 'Hello there')).toMatchObject({ type: 'ack' })
    const list = await messages(t)
    expect(list).toHaveLength(1)
    expect(list[0]).toMatchObject({ direction: 'inbound', status: 'received', text: 'Hello there', contact: { phone: '+447700900123', name: 'Ada' } })
    expect((await eventTypes(t.tenantId)).filter((e) => e === 'message.received')).toHaveLength(1)
  })

  it('key the contact by LID and keep the number, so a reply by number reaches the same person', async () => {
    const { t, relay, assign, phone } = await linkedAccount()
    await inbound(relay, assign, 'UP2', { phone: '+447700900124', lid: '123456789@lid' }, 'hi')
    const [m] = await messages(t)
    const reply = await send(t, { account_id: phone, to: { phone: '+447700900124' }, text: 'Hi back' })
    expect(reply.status).toBe(202)
    const frame = await relay.next('send', (s) => s.message.messageId === reply.body.message_id)
    expect(frame.message.to).toEqual({ phone: '+447700900124', peerId: '123456789@lid' })
    const [out] = await messages(t)
    expect(out!.contact.id).toBe(m!.contact.id)
  })

  it('are stored once each and in order when they come in a burst, acked after the commit', async () => {
    const { t, relay, assign } = await linkedAccount()
    const burst = Array.from({ length: 30 }, (_, i) => ({ id: `UPR${i}`, phone: `+4477009003${String(i % 3).padStart(2, '0')}`, text: `r${i}` }))
    const replies = await Promise.all(burst.map((b) => inbound(relay, assign, b.id, { phone: b.phone }, b.text)))
    expect(replies.every((r) => r.type === 'ack')).toBe(true)
    expect(await inbound(relay, assign, 'UPR3', { phone: '+447700900300' }, 'r3')).toMatchObject({ type: 'ack' })
    expect((await messages(t)).map((m) => m.text).reverse()).toEqual(burst.map((b) => b.text))
  })

  it('are group-committed by the AccountDO: one batch, each new one stored once with its event, a STOP applied', async () => {
    const { t, assign } = await linkedAccount()
    const from = (i: number) => ({ id: `p${i % 5}`, phone: `4477009002${String(i % 5).padStart(2, '0')}`, lid: null, name: null })
    const burst = Array.from({ length: 40 }, (_, i) => ({ upstreamId: `UPB${i}`, from: from(i), text: `m${i}`, media: null, sentAt: Date.now() }))
    burst.push({ upstreamId: 'UPB7', from: from(7), text: 'm7 again', media: null, sentAt: Date.now() }) // resent within the burst
    burst.push({ upstreamId: 'UPB99', from: from(1), text: 'STOP', media: null, sentAt: Date.now() })
    const stub = accountStub(env, t.tenantId, assign.account.accountId)
    const ref = { tenantId: t.tenantId, accountId: assign.account.accountId, channel: 'alpha_web' as const }
    await stub.relayInbound(ref, assign.sid, burst)
    await stub.relayInbound(ref, assign.sid, burst.slice(0, 2)) // resent after the commit: nothing new

    const stored = await env.DB.prepare("SELECT text FROM messages WHERE tenant_id = ? AND direction = 'inbound' ORDER BY seq")
      .bind(t.tenantId)
      .all<{ text: string }>()
    expect(stored.results.map((r) => r.text)).toEqual([...burst.slice(0, 40).map((b) => b.text), 'STOP'])
    expect((await eventTypes(t.tenantId)).filter((e) => e === 'message.received')).toHaveLength(41)
    const dnd = await env.DB.prepare('SELECT phone, do_not_disturb FROM contacts WHERE tenant_id = ? ORDER BY phone')
      .bind(t.tenantId)
      .all<{ phone: string; do_not_disturb: number }>()
    expect(dnd.results).toEqual([
      { phone: '+447700900200', do_not_disturb: 0 },
      { phone: '+447700900201', do_not_disturb: 1 },
      { phone: '+447700900202', do_not_disturb: 0 },
      { phone: '+447700900203', do_not_disturb: 0 },
      { phone: '+447700900204', do_not_disturb: 0 },
    ])
  })

  it('are refused as stale when their fencing number is ahead of the current one', async () => {
    const { relay, assign } = await linkedAccount()
    const res = await inbound(relay, { sid: assign.sid, fence: assign.fence + 1 }, 'UP3', { phone: '+447700900125' }, 'x')
    expect(res).toMatchObject({ type: 'reject', reason: 'stale_fence', sid: assign.sid })
  })

  it('are still accepted from an earlier holder of the session, but its state reports are not', async () => {
    const { t, relay, assign } = await linkedAccount()
    // The session moves on (a restart under a new fence); frames the old run sent late still carry the old one.
    const res = await call('/v1/channels/alpha-web/connections', { method: 'POST', key: t.key, json: { phone_number: assign.account.phone, force_new: true } })
    expect(res.status).toBe(200)
    const next = await relay.next('assign', (a) => a.account.accountId === assign.account.accountId && a.fence > assign.fence)
    const late = { sid: next.sid, fence: assign.fence }
    expect(await inbound(relay, late, 'UPLATE', { phone: '+447700900126' }, 'sent before the move')).toMatchObject({ type: 'ack' })
    expect(await relay.state({ ...next, fence: assign.fence }, { state: 'connecting' })).toMatchObject({ type: 'reject', reason: 'stale_fence' })
    expect((await messages(t)).map((m) => m.text)).toEqual(['sent before the move'])
  })

  it('are refused for a session the edge does not know', async () => {
    const { relay } = await linkedAccount()
    expect(await inbound(relay, { sid: 'ses_unknown', fence: 1 }, 'UP4', { phone: '+447700900126' }, 'x')).toMatchObject({
      type: 'reject',
      reason: 'unknown_session',
    })
  })
})

describe('sends through the relay', () => {
  it('stay queued until the relay reports the hand-over, then turn sent with the upstream id and message.sent', async () => {
    const { t, relay, phone, assign } = await linkedAccount()
    await inbound(relay, assign, 'UP10', { phone: '+447700900130' }, 'question')
    const reply = await send(t, { account_id: phone, to: { phone: '+447700900130' }, text: 'answer' })
    const id = reply.body.message_id as string
    const frame = await relay.next('send', (s) => s.message.messageId === id)
    expect(frame).toMatchObject({ sid: assign.sid, fence: assign.fence, message: { text: 'answer', mediaUrl: null } })
    expect(frame.expiresAt).toBeGreaterThan(Date.now() + 9 * 60_000)
    expect((await body(await call(`/v1/messages/${id}`, { key: t.key }))).status).toBe('queued')

    await relay.request({ type: 'sent', id: relay.id(), sid: assign.sid, fence: assign.fence, messageId: id, upstreamId: '3EB0AAA' })
    await relay.request({ type: 'sent', id: relay.id(), sid: assign.sid, fence: assign.fence, messageId: id, upstreamId: '3EB0AAA' })
    expect((await body(await call(`/v1/messages/${id}`, { key: t.key }))).status).toBe('sent')
    expect((await eventTypes(t.tenantId)).filter((e) => e === 'message.sent')).toHaveLength(1)
  })

  it('move forward only on receipts: delivered, read, and a late delivered changes nothing', async () => {
    const { t, relay, phone, assign } = await linkedAccount()
    await inbound(relay, assign, 'UP11', { phone: '+447700900131' }, 'q')
    const id = (await send(t, { account_id: phone, to: { phone: '+447700900131' }, text: 'a' })).body.message_id as string
    await relay.next('send', (s) => s.message.messageId === id)
    await relay.request({ type: 'sent', id: relay.id(), sid: assign.sid, fence: assign.fence, messageId: id, upstreamId: '3EB0BBB' })
    const receipt = (status: 'delivered' | 'read') =>
      relay.request({ type: 'receipt', id: relay.id(), sid: assign.sid, fence: assign.fence, receipt: { upstreamId: '3EB0BBB', status } })
    await receipt('delivered')
    expect((await body(await call(`/v1/messages/${id}`, { key: t.key }))).status).toBe('delivered')
    await receipt('read')
    await receipt('delivered')
    expect((await body(await call(`/v1/messages/${id}`, { key: t.key }))).status).toBe('read')
    expect((await eventTypes(t.tenantId)).filter((e) => e.startsWith('message.') && e !== 'message.received')).toEqual([
      'message.sent',
      'message.delivered',
      'message.read',
    ])
  })

  it('fail with the upstream reason and message.failed when the relay reports a refusal', async () => {
    const { t, relay, phone, assign } = await linkedAccount()
    await inbound(relay, assign, 'UP12', { phone: '+447700900132' }, 'q')
    const id = (await send(t, { account_id: phone, to: { phone: '+447700900132' }, text: 'a' })).body.message_id as string
    await relay.next('send', (s) => s.message.messageId === id)
    await relay.request({
      type: 'send_failed',
      id: relay.id(),
      sid: assign.sid,
      fence: assign.fence,
      messageId: id,
      error: 'the number is not on alpha',
      code: 404,
    })
    const m = await body(await call(`/v1/messages/${id}`, { key: t.key }))
    expect(m).toMatchObject({ status: 'failed', error: { code: 404, message: 'the number is not on alpha' } })
    expect(await eventTypes(t.tenantId)).toContain('message.failed')
  })

  it("fail on a failed receipt with alpha's code and reason; a relay that sends no code leaves it null", async () => {
    const { t, relay, phone, assign } = await linkedAccount()
    await inbound(relay, assign, 'UP15', { phone: '+447700900135' }, 'q')
    const failedReceipt = async (text: string, upstreamId: string, code?: number) => {
      const id = (await send(t, { account_id: phone, to: { phone: '+447700900135' }, text })).body.message_id as string
      await relay.next('send', (s) => s.message.messageId === id)
      await relay.request({ type: 'sent', id: relay.id(), sid: assign.sid, fence: assign.fence, messageId: id, upstreamId })
      const error = `alpha refused the message (error ${code ?? 'unknown'})`
      const receipt = { upstreamId, status: 'failed' as const, error, ...(code === undefined ? {} : { code }) }
      await relay.request({ type: 'receipt', id: relay.id(), sid: assign.sid, fence: assign.fence, receipt })
      return body(await call(`/v1/messages/${id}`, { key: t.key }))
    }
    expect(await failedReceipt('one', '3EB0CCC', 479)).toMatchObject({
      status: 'failed',
      error: { code: 479, message: 'alpha refused the message (error 479)' },
    })
    expect(await failedReceipt('two', '3EB0DDD')).toMatchObject({
      status: 'failed',
      error: { code: null, message: 'alpha refused the message (error unknown)' },
    })
  })

  it('wait queued without a relay and go to the relay that takes the account, on its connected report', async () => {
    const { t, relay, phone, assign, token } = await linkedAccount()
    await inbound(relay, assign, 'UP13', { phone: '+447700900133' }, 'q')
    // The link drops: the hub no longer has a live holder, so the send stays queued.
    relay.ws.close(1000, 'gone')
    await relay.waitClosed().catch(() => undefined)
    await new Promise((r) => setTimeout(r, 50))
    const id = (await send(t, { account_id: phone, to: { phone: '+447700900133' }, text: 'later' })).body.message_id as string
    expect((await body(await call(`/v1/messages/${id}`, { key: t.key }))).status).toBe('queued')

    // The same relay process comes back within the lease and still runs the session.
    const back = await FakeRelay.open(token, { instance: relay.instance, sessions: [{ sid: assign.sid, fence: assign.fence }] })
    relays.push(back)
    await expect(back.next('send', (s) => s.message.messageId === id)).resolves.toMatchObject({ sid: assign.sid, fence: assign.fence })
  })

  it('fail with relay_unavailable 10 minutes after they were queued when no relay sent them', async () => {
    const { t, relay, phone, assign } = await linkedAccount()
    await inbound(relay, assign, 'UP14', { phone: '+447700900134' }, 'q')
    relay.close()
    await new Promise((r) => setTimeout(r, 50))
    const id = (await send(t, { account_id: phone, to: { phone: '+447700900134' }, text: 'never' })).body.message_id as string
    const stub = accountStub(env, t.tenantId, phone)

    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + 9 * 60_000)
    await runDurableObjectAlarm(stub)
    expect((await body(await call(`/v1/messages/${id}`, { key: t.key }))).status).toBe('queued')
    vi.setSystemTime(Date.now() + 61_000)
    await runDurableObjectAlarm(stub)
    const m = await body<{ status: string; error: { message: string } }>(await call(`/v1/messages/${id}`, { key: t.key }))
    expect(m.status).toBe('failed')
    expect(m.error.message).toMatch(/^relay_unavailable: /)
    expect(await eventTypes(t.tenantId)).toContain('message.failed')
  })

  it('wait through an upstream outage (unresponsive) and are handed over again once the session is connected', async () => {
    const { t, relay, phone, assign } = await linkedAccount()
    await inbound(relay, assign, 'UP16', { phone: '+447700900136' }, 'q')
    const id = (await send(t, { account_id: phone, to: { phone: '+447700900136' }, text: 'x' })).body.message_id as string
    await relay.next('send', (s) => s.message.messageId === id)
    await relay.state(assign, { state: 'disconnected', problem: 'unresponsive', message: 'beta stopped answering.' })
    expect((await body(await call(`/v1/messages/${id}`, { key: t.key }))).status).toBe('queued')
    await relay.state(assign, { state: 'connected', identifier: phone, upstreamUserId: null })
    expect(await relay.next('send', (s) => s.message.messageId === id)).toMatchObject({ message: { text: 'x' } })
  })

  it('fail at once with the reason when the session logs out', async () => {
    const { t, relay, phone, assign } = await linkedAccount()
    await inbound(relay, assign, 'UP15', { phone: '+447700900135' }, 'q')
    const id = (await send(t, { account_id: phone, to: { phone: '+447700900135' }, text: 'x' })).body.message_id as string
    await relay.next('send', (s) => s.message.messageId === id)
    await relay.state(assign, { state: 'disconnected', problem: 'logged_out', message: 'The device was removed from the phone.' })
    const m = await body<{ status: string; error: { message: string } }>(await call(`/v1/messages/${id}`, { key: t.key }))
    expect(m).toMatchObject({ status: 'failed', error: { message: 'logged_out: The device was removed from the phone.' } })
  })
})

describe('session store frames', () => {
  it('keep the ciphertext the relay writes and give it back on load, and a stale fence cannot overwrite it', async () => {
    const { relay, assign } = await linkedAccount()
    const write = (fence: number, changes: Record<string, string | null>, clear = false) =>
      relay.request({ type: 'session_write', id: relay.id(), sid: assign.sid, fence, clear, changes })
    expect(await write(assign.fence, { k1: 'v1.c1', k2: 'v1.c2' })).toMatchObject({ type: 'ack' })
    expect(await write(assign.fence, { k2: null, k3: 'v1.c3' })).toMatchObject({ type: 'ack' })
    const loaded = await relay.request({ type: 'session_load', id: relay.id(), sid: assign.sid, fence: assign.fence })
    expect(loaded).toMatchObject({ type: 'session_data', entries: { k1: 'v1.c1', k3: 'v1.c3' } })
    expect(await write(assign.fence - 1 || 0, { k1: 'evil' })).toMatchObject({ type: 'reject' })
    expect(await write(assign.fence, {}, true)).toMatchObject({ type: 'ack' })
    expect(await relay.request({ type: 'session_load', id: relay.id(), sid: assign.sid, fence: assign.fence })).toMatchObject({ entries: {} })
  })
})

describe('a number removed and added again (issue 14 §1)', () => {
  it('continues its fence past every earlier link and gets a new session whose writes are acked', async () => {
    const { t, relay, phone, assign: first } = await linkedAccount()
    const connect = async (json: Record<string, unknown>) => {
      expect((await call('/v1/channels/alpha-web/connections', { method: 'POST', key: t.key, json: { phone_number: phone, ...json } })).status).toBe(200)
    }
    await connect({ force_new: true })
    const second = await relay.next('assign', (a) => a.account.accountId === phone && a.fence > first.fence)
    expect(
      await relay.request({ type: 'session_write', id: relay.id(), sid: second.sid, fence: second.fence, clear: false, changes: { k: 'v2' } })
    ).toMatchObject({ type: 'ack' })
    expect((await call(`/v1/channels/alpha-web/connections/${encodeURIComponent(phone)}`, { method: 'DELETE', key: t.key })).status).toBe(200)
    await relay.next('logout', (l) => l.sid === second.sid)

    await connect({})
    const third = await relay.next('assign', (a) => a.account.accountId === phone)
    expect(third.fence).toBeGreaterThan(second.fence)
    expect(third.sid).not.toBe(second.sid)
    expect(
      await relay.request({ type: 'session_write', id: relay.id(), sid: third.sid, fence: third.fence, clear: false, changes: { k: 'v3' } })
    ).toMatchObject({ type: 'ack' })
    expect(await relay.request({ type: 'session_load', id: relay.id(), sid: third.sid, fence: third.fence })).toMatchObject({
      type: 'session_data',
      entries: { k: 'v3' },
    })
  })

  it('answers a write the account refuses with a reject naming the reason, instead of leaving it unanswered', async () => {
    const { t, relay, phone, assign } = await linkedAccount()
    // The account remembers a higher fence than the hub hands out (as an old session id left behind once did).
    const stub = accountStub(env, t.tenantId, phone)
    await runInDurableObject(
      stub,
      (_o, state) => void state.storage.sql.exec("INSERT INTO kv (key, value) VALUES ('session_fence', '99') ON CONFLICT (key) DO UPDATE SET value = '99'")
    )
    const answer = await relay.request({ type: 'session_write', id: relay.id(), sid: assign.sid, fence: assign.fence, clear: false, changes: { k: 'v' } })
    expect(answer).toMatchObject({ type: 'reject', sid: assign.sid, fence: assign.fence, reason: 'stale_fence' })
  })
})

describe('contacts frames', () => {
  it('import the contacts with ai_paused and private as asked, and count chat partners as people who wrote', async () => {
    const { t, relay, phone, assign } = await linkedAccount({ import_contacts: true, import_existing_chats: true })
    expect(assign.importContacts).toBe(true)
    await relay.request({
      type: 'contacts',
      id: relay.id(),
      sid: assign.sid,
      fence: assign.fence,
      contacts: [
        { id: '447700900140@s.whatsapp.net', phone: '447700900140', lid: null, name: 'Grace', hasChat: true },
        { id: '447700900141@s.whatsapp.net', phone: '447700900141', lid: null, name: 'Linus', hasChat: false },
      ],
    })
    const rows = await env.DB.prepare('SELECT phone, name, ai_paused, private FROM contacts WHERE tenant_id = ? ORDER BY phone').bind(t.tenantId).all()
    expect(rows.results).toEqual([
      { phone: '+447700900140', name: 'Grace', ai_paused: 1, private: 0 },
      { phone: '+447700900141', name: 'Linus', ai_paused: 1, private: 0 },
    ])
    // ramp day 1 allows no new contacts; Grace has a chat, so writing to her is a reply, Linus is a new contact.
    const toGrace = await send(t, { account_id: phone, to: { phone: '+447700900140' }, text: 'hi Grace' })
    expect(toGrace.status).toBe(202)
    expect((await body<{ contact: Record<string, unknown> }>(await call(`/v1/messages/${toGrace.body.message_id}`, { key: t.key }))).contact).toMatchObject({
      name: 'Grace',
      ai_paused: true,
    })
    expect((await send(t, { account_id: phone, to: { phone: '+447700900141' }, text: 'hi Linus' })).body.error_code).toBe('new_contact_cap')
  })

  it('mark imported contacts private so nothing to or from them is stored or sent', async () => {
    const { t, relay, phone, assign } = await linkedAccount({
      import_contacts: true,
      mark_imported_contacts_as_private: true,
      pause_ai_for_imported_contacts: false,
    })
    await relay.request({
      type: 'contacts',
      id: relay.id(),
      sid: assign.sid,
      fence: assign.fence,
      contacts: [{ id: '447700900150@s.whatsapp.net', phone: '447700900150', lid: null, name: 'Private', hasChat: true }],
    })
    expect(await inbound(relay, assign, 'UP20', { phone: '+447700900150' }, 'secret')).toMatchObject({ type: 'ack' })
    expect(await messages(t)).toEqual([])
    expect((await send(t, { account_id: phone, to: { phone: '+447700900150' }, text: 'x' })).body.error_code).toBe('contact_private')
  })

  it('are ignored when import_contacts was not asked for', async () => {
    const { t, relay, assign } = await linkedAccount()
    await relay.request({
      type: 'contacts',
      id: relay.id(),
      sid: assign.sid,
      fence: assign.fence,
      contacts: [{ id: 'x@s.whatsapp.net', phone: '447700900160', lid: null, name: 'N', hasChat: false }],
    })
    const n = await env.DB.prepare('SELECT count(*) AS n FROM contacts WHERE tenant_id = ?').bind(t.tenantId).first<{ n: number }>()
    expect(n?.n).toBe(0)
  })
})
