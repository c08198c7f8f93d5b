/**
 * The Android phone (SMS Gateway for Android) against the fake gateway: connect registers one webhook per event and
 * sets the signing key, signed webhooks in (forged, stale, replayed), sends with our id as the gateway's id, the
 * phone offline (503) then back on an injected clock (sent once), delivery reports, and media refused.
 */
import { runDurableObjectAlarm } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { and, eq } from 'drizzle-orm'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { messages } from '../../../../schema/d1'
import { accountStub } from '../../../../worker/lib/objects'
import { retryDelayMs, SMS_RETRY_FOR_MS } from '../../../../worker/channels/sms/outbound'
import { body, call, newTenant, send, settled } from '../../helpers'
import { db, eventsOf, setClock } from '../../state'
import { connectPhone, gateway, post, retrying } from './sms-helpers'

const NUMBER = '+447700900123'
const FROM = '+447700900321'

afterEach(() => {
  vi.useRealTimers()
})

async function inboundRows(tenantId: string) {
  return db
    .select()
    .from(messages)
    .where(and(eq(messages.tenantId, tenantId), eq(messages.direction, 'inbound')))
}

describe('POST /v1/channels/sms/android-gateway', () => {
  it('checks the credentials, sets a signing key, registers the five webhooks with stable ids and answers the webhook URL', async () => {
    const t = await newTenant()
    const p = await connectPhone(t)
    const webhookUrl = `https://gateway.test/v1/channels/sms/android-gateway/${t.tenantId}/447700900123/events`
    expect(p.json).toMatchObject({
      success: true,
      phone_number: NUMBER,
      status: 'connected',
      sends_via: 'android_gateway',
      webhook_url: webhookUrl,
      android_gateway: { mode: 'cloud', webhook_url: webhookUrl, device_id: p.device_id, status: 'connected' },
      twilio: null,
    })
    expect(JSON.stringify(p.json)).not.toContain(p.password)
    const state = await gateway.state(p.username)
    expect(state.webhooks.map((w) => w.event).sort()).toEqual(['mms:downloaded', 'sms:delivered', 'sms:failed', 'sms:received', 'sms:sent'])
    expect(new Set(state.webhooks.map((w) => w.url))).toEqual(new Set([webhookUrl]))
    // Connecting again replaces the same five webhooks.
    const again = await call('/v1/channels/sms/android-gateway', {
      method: 'POST',
      key: t.key,
      json: { username: p.username, password: p.password, phone_number: NUMBER },
    })
    expect(again.status).toBe(200)
    expect((await gateway.state(p.username)).webhooks).toHaveLength(5)
  })

  it('refuses wrong credentials with 400 and stores nothing', async () => {
    const t = await newTenant()
    const user = await gateway.createUser()
    const res = await call('/v1/channels/sms/android-gateway', {
      method: 'POST',
      key: t.key,
      json: { username: user.username, password: 'nope', phone_number: NUMBER },
    })
    expect(res.status).toBe(400)
    expect((await body(await call('/v1/accounts', { key: t.key }))).accounts).toEqual([])
  })

  it('connects in local mode to the phone’s own server (no /3rdparty/v1 prefix)', async () => {
    const t = await newTenant()
    const user = await gateway.createUser()
    const res = await call('/v1/channels/sms/android-gateway', {
      method: 'POST',
      key: t.key,
      json: { username: user.username, password: user.password, phone_number: NUMBER, mode: 'local', base_url: `${gateway.base()}/local` },
    })
    expect(res.status).toBe(200)
    expect(await body(res)).toMatchObject({ android_gateway: { mode: 'local', device_id: null } })
    expect((await gateway.state(user.username)).webhooks).toHaveLength(5)
  })

  it('refuses local mode without base_url, and a private base_url', async () => {
    const t = await newTenant()
    const json = { username: 'u', password: 'p', phone_number: NUMBER, mode: 'local' }
    expect((await call('/v1/channels/sms/android-gateway', { method: 'POST', key: t.key, json })).status).toBe(400)
    const priv = await call('/v1/channels/sms/android-gateway', { method: 'POST', key: t.key, json: { ...json, base_url: 'https://192.168.1.20:8080' } })
    expect(priv.status).toBe(400)
  })

  it('GET /v1/channels/sms/android-gateway reports when the phone was last seen, offline after 30 minutes', async () => {
    const t = await newTenant()
    const p = await connectPhone(t)
    const seen = new Date(Date.now() - 3_600_000).toISOString()
    await gateway.setOnline(p.username, false, seen)
    const res = await body(await call('/v1/channels/sms/android-gateway', { key: t.key }))
    expect(res).toMatchObject({ success: true, phone_number: NUMBER, status: 'offline', android_gateway: { last_seen: seen, live: true } })
    const none = await body(await call('/v1/channels/sms/android-gateway', { key: (await newTenant()).key }))
    expect(none).toMatchObject({ status: 'not_connected', android_gateway: null })
  })
})

describe('the phone’s webhooks', () => {
  it('stores a signed sms:received once, even when the phone retries it', async () => {
    const t = await newTenant()
    const p = await connectPhone(t)
    const w = await gateway.event(p.username, {
      event: 'sms:received',
      payload: { messageId: 'abc', message: 'Hi from the phone', sender: FROM, recipient: NUMBER, simNumber: 1, receivedAt: '2026-11-24T10:00:00.000+00:00' },
    })
    expect((await post(w)).status).toBe(204)
    expect((await post(w)).status).toBe(204)
    const rows = await inboundRows(t.tenantId)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ text: 'Hi from the phone' })
    expect(await eventsOf(t.tenantId, 'message.received')).toHaveLength(1)
  })

  it('normalises a sender in local format on a +1 number', async () => {
    const t = await newTenant()
    const p = await connectPhone(t, '+14155550100')
    await post(await gateway.event(p.username, { event: 'sms:received', payload: { messageId: 'x', message: 'yo', sender: '6505551212' } }))
    const list = await body<{ messages: { contact: { phone: string } }[] }>(await call('/v1/messages', { key: t.key }))
    expect(list.messages[0]?.contact.phone).toBe('+16505551212')
  })

  it('refuses a forged signature, a tampered body and a timestamp older than 5 minutes with 403, storing nothing', async () => {
    const t = await newTenant()
    const p = await connectPhone(t)
    const payload = { messageId: 'f', message: 'forged', sender: FROM }
    expect((await post(await gateway.event(p.username, { event: 'sms:received', payload, sign_with: 'another-key' }))).status).toBe(403)
    const w = await gateway.event(p.username, { event: 'sms:received', payload })
    expect((await post(w, { body: w.body.replace('forged', 'changed') })).status).toBe(403)
    expect((await post(w, { headers: { 'X-Signature': null } })).status).toBe(403)
    expect((await post(await gateway.event(p.username, { event: 'sms:received', payload, timestamp_offset_s: -301 }))).status).toBe(403)
    expect(await inboundRows(t.tenantId)).toHaveLength(0)
  })
})

describe('sending from the phone', () => {
  it('enqueues the SMS with our message id as the gateway id; sms:sent then sms:delivered move it forward', async () => {
    const t = await newTenant()
    const p = await connectPhone(t)
    const r = await send(t, { to: { phone: FROM }, text: 'From my SIM' })
    const id = String(r.body.message_id)
    expect((await settled(t, id)).status).toBe('sent')
    const state = await gateway.state(p.username)
    expect(state.messages).toEqual([{ id, phoneNumbers: [FROM], text: 'From my SIM', withDeliveryReport: true, state: 'Pending' }])
    await post(await gateway.event(p.username, { event: 'sms:sent', payload: { messageId: id, sender: NUMBER, recipient: FROM, partsCount: 1 } }))
    await post(await gateway.event(p.username, { event: 'sms:delivered', payload: { messageId: id, sender: NUMBER, recipient: FROM } }))
    await post(await gateway.event(p.username, { event: 'sms:delivered', payload: { messageId: id, sender: NUMBER, recipient: FROM } }))
    expect((await settled(t, id)).status).toBe('delivered')
    expect(await eventsOf(t.tenantId, 'message.delivered')).toHaveLength(1)
  })

  it('fails the message on sms:failed with the phone’s reason', async () => {
    const t = await newTenant()
    const p = await connectPhone(t)
    const id = String((await send(t, { to: { phone: FROM }, text: 'x' })).body.message_id)
    await settled(t, id)
    await post(await gateway.event(p.username, { event: 'sms:failed', payload: { messageId: id, reason: 'RESULT_ERROR_GENERIC_FAILURE' } }))
    expect(await settled(t, id)).toMatchObject({ status: 'failed', error: { message: expect.stringContaining('RESULT_ERROR_GENERIC_FAILURE') } })
  })

  it('keeps the message queued while the phone is offline (503) and sends it once when it is back', async () => {
    const T0 = Date.parse('2030-04-01T08:00:00.000Z')
    setClock(T0)
    const t = await newTenant()
    const p = await connectPhone(t)
    await gateway.setOnline(p.username, false)
    const id = String((await send(t, { to: { phone: FROM }, text: 'wait for me' })).body.message_id)
    expect(await retrying(id)).toMatchObject({ status: 'queued', errorMessage: expect.stringContaining('phone') })
    // Over REST the reason is no failure (error stays null until the message fails): it is the retry_reason extension.
    const queued = await body(await call(`/v1/messages/${id}`, { key: t.key }))
    expect(queued).toMatchObject({ status: 'queued', error: null, retry_reason: expect.stringContaining('phone') })
    const stub = accountStub(env, t.tenantId, NUMBER)

    // Still offline at the first retry: queued again, with a longer wait.
    const first = T0 + retryDelayMs(0)
    vi.setSystemTime(first)
    await runDurableObjectAlarm(stub)
    expect(await db.select().from(messages).where(eq(messages.id, id)).get()).toMatchObject({
      status: 'queued',
      errorMessage: expect.stringContaining('Queue limits'),
    })

    await gateway.setOnline(p.username, true)
    vi.setSystemTime(first + retryDelayMs(first - T0))
    await runDurableObjectAlarm(stub)
    expect(await settled(t, id)).toMatchObject({ status: 'sent', error: null })
    const state = await gateway.state(p.username)
    expect(state.send_attempts.map((a) => a.status)).toEqual([503, 503, 202])
    expect(state.messages.filter((m) => m.id === id)).toHaveLength(1)
  })

  it('fails the message with its reason once the phone stayed offline for an hour', async () => {
    const T0 = Date.parse('2030-04-02T08:00:00.000Z')
    setClock(T0)
    const t = await newTenant()
    const p = await connectPhone(t)
    await gateway.setOnline(p.username, false)
    const id = String((await send(t, { to: { phone: FROM }, text: 'never' })).body.message_id)
    await retrying(id)
    vi.setSystemTime(T0 + SMS_RETRY_FOR_MS)
    await runDurableObjectAlarm(accountStub(env, t.tenantId, NUMBER))
    expect(await settled(t, id)).toMatchObject({ status: 'failed', error: { message: expect.stringContaining('Queue limits exceeded') } })
    expect(await eventsOf(t.tenantId, 'message.failed')).toHaveLength(1)
  })

  it('refuses media on the phone path with 422 media_not_supported', async () => {
    const t = await newTenant()
    await connectPhone(t)
    const r = await send(t, { to: { phone: FROM }, text: 'pic', media_url: 'https://cdn.example.com/a.jpg' })
    expect(r).toMatchObject({ status: 422, body: { error_code: 'media_not_supported' } })
  })
})
