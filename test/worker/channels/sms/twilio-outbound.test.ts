/**
 * Sending through Twilio: what Messages.json receives (a per-message signed StatusCallback), status callbacks that
 * only move forward, failed/undelivered with Twilio's error code, 21610 opting the contact out, MMS only where the
 * number can, and a Twilio outage retried rather than failed at once.
 */
import { runDurableObjectAlarm } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { eq } from 'drizzle-orm'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { contacts, messages } from '../../../../schema/d1'
import { accountStub } from '../../../../worker/lib/objects'
import { body, call, newTenant, send, settled, type TestTenant } from '../../helpers'
import { retryDelayMs } from '../../../../worker/channels/sms/outbound'
import { db, eventsOf, setClock } from '../../state'
import { connectTwilio, post, retrying, twilio } from './sms-helpers'

const TO = '+447700900777'

afterEach(() => {
  vi.useRealTimers()
})

async function sent(t: TestTenant, c: { account_sid: string }, json: Record<string, unknown> = {}) {
  const r = await send(t, { to: { phone: TO }, text: 'Your order shipped', ...json })
  expect(r.status).toBe(202)
  const id = String(r.body.message_id)
  const m = await settled(t, id)
  const state = await twilio.state(c.account_sid)
  return { id, m, twilioMessage: state.messages.at(-1)! }
}

describe('sending through Twilio', () => {
  it('posts To, From, Body and a per-message StatusCallback, and marks the message sent with the Twilio sid', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const { id, m, twilioMessage } = await sent(t, c)
    expect(m.status).toBe('sent')
    expect(twilioMessage).toMatchObject({ to: TO, from: c.number, body: 'Your order shipped', media: [] })
    expect(twilioMessage.status_callback).toMatch(
      new RegExp(`^https://gateway\\.test/v1/channels/sms/twilio/${t.tenantId}/447700900123/status/${id}\\?token=[0-9a-f]{32}$`)
    )
    const row = await db.select().from(messages).where(eq(messages.id, id)).get()
    expect(row?.upstreamId).toBe(twilioMessage.sid)
  })

  it('moves the message forward only: delivered, read; a late sent or delivered changes nothing; one event each', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const { id, twilioMessage } = await sent(t, c)
    expect((await post(await twilio.status(c.account_sid, twilioMessage.sid, 'delivered'))).status).toBe(204)
    expect((await settled(t, id)).status).toBe('delivered')
    await post(await twilio.status(c.account_sid, twilioMessage.sid, 'sent'))
    expect((await settled(t, id)).status).toBe('delivered')
    await post(await twilio.status(c.account_sid, twilioMessage.sid, 'read'))
    await post(await twilio.status(c.account_sid, twilioMessage.sid, 'delivered'))
    await post(await twilio.status(c.account_sid, twilioMessage.sid, 'read'))
    expect((await settled(t, id)).status).toBe('read')
    expect((await eventsOf(t.tenantId)).map((e) => e.type).filter((x) => x.startsWith('message.'))).toEqual([
      'message.sent',
      'message.delivered',
      'message.read',
    ])
  })

  it('ignores queued/sending callbacks and fails undelivered with the provider error code', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const { id, twilioMessage } = await sent(t, c)
    await post(await twilio.status(c.account_sid, twilioMessage.sid, 'sending'))
    expect((await settled(t, id)).status).toBe('sent')
    await post(await twilio.status(c.account_sid, twilioMessage.sid, 'undelivered', 30003))
    const m = await body<{ status: string; error: { code: number; message: string } }>(await call(`/v1/messages/${id}`, { key: t.key }))
    expect(m.status).toBe('failed')
    expect(m.error).toEqual({ code: 30003, message: expect.stringContaining('30003') })
    const [failed] = await eventsOf(t.tenantId, 'message.failed')
    expect(failed?.payload).toMatchObject({ message: { status: 'failed', error: expect.stringContaining('undelivered') } })
    // A late delivered after failed does not revive it.
    await post(await twilio.status(c.account_sid, twilioMessage.sid, 'delivered'))
    expect((await settled(t, id)).status).toBe('failed')
  })

  it('fails a message with status failed and its error code', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const { id, twilioMessage } = await sent(t, c)
    await post(await twilio.status(c.account_sid, twilioMessage.sid, 'failed', 30007))
    expect(await settled(t, id)).toMatchObject({ status: 'failed', error: { code: 30007 } })
  })

  it('takes carrier filtering (30007) as a ban-risk signal: account.at_risk, risk on the account, new contacts paused', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const { twilioMessage } = await sent(t, c)
    // Another failure is not a risk signal.
    await post(await twilio.status(c.account_sid, twilioMessage.sid, 'undelivered', 30003))
    expect(await eventsOf(t.tenantId, 'account.at_risk')).toEqual([])
    const second = await sent(t, c)
    await post(await twilio.status(c.account_sid, second.twilioMessage.sid, 'failed', 30007))
    expect((await settled(t, second.id)).status).toBe('failed')
    const [risk] = await eventsOf(t.tenantId, 'account.at_risk')
    expect(risk?.payload).toMatchObject({ signal: 'carrier_filtering', advice: expect.any(String) })
    const accounts = await body<{ accounts: Array<{ risk?: { at_risk: boolean } }> }>(await call('/v1/accounts', { key: t.key }))
    expect(accounts.accounts[0]?.risk?.at_risk).toBe(true)
    const stranger = await send(t, { to: { phone: '+447700900778' }, text: 'Hello' })
    expect(stranger.body.error_code).toBe('account_at_risk')
  })

  it('refuses a status callback with a forged signature or a token for another message (403, nothing changes)', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const { id, twilioMessage } = await sent(t, c)
    const p = await twilio.status(c.account_sid, twilioMessage.sid, 'delivered')
    expect((await post(p, { headers: { 'X-Twilio-Signature': 'AAAA' } })).status).toBe(403)
    expect((await post({ ...p, url: p.url.replace(/token=[0-9a-f]+/, `token=${'0'.repeat(32)}`) })).status).toBe(403)
    expect((await settled(t, id)).status).toBe('sent')
  })

  it('marks the contact opted out when Twilio answers 21610, fails the message, and refuses later sends with 422', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    await twilio.optOut(c.account_sid, TO)
    const { id, m } = await sent(t, c)
    expect(m).toMatchObject({ status: 'failed', error: { code: 21610 } })
    const contact = await db.select().from(contacts).where(eq(contacts.phone, TO)).all()
    expect(contact.find((x) => x.tenantId === t.tenantId)?.optedOut).toBe(true)
    const again = await send(t, { to: { phone: TO }, text: 'hello?' })
    expect(again).toMatchObject({ status: 422, body: { error_code: 'contact_opted_out' } })
    expect(id).toBeTruthy()
  })

  it('sends media as MMS from an MMS-capable number', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t, '+447700900123', { mms: true })
    const { m, twilioMessage } = await sent(t, c, { media_url: 'https://cdn.example.com/photo.jpg' })
    expect(m.status).toBe('sent')
    expect(twilioMessage.media).toEqual(['https://cdn.example.com/photo.jpg'])
  })

  it('refuses media from a number without MMS with 422 media_not_supported', async () => {
    const t = await newTenant()
    await connectTwilio(t)
    const r = await send(t, { to: { phone: TO }, text: 'pic', media_url: 'https://cdn.example.com/photo.jpg' })
    expect(r).toMatchObject({ status: 422, body: { error_code: 'media_not_supported' } })
  })

  it('keeps the message queued while Twilio answers 503 and sends it once Twilio is back', async () => {
    const T0 = Date.parse('2030-03-01T12:00:00.000Z')
    setClock(T0)
    const t = await newTenant()
    const c = await connectTwilio(t)
    await twilio.failSends(c.account_sid, 503)
    const r = await send(t, { to: { phone: TO }, text: 'retry me' })
    const id = String(r.body.message_id)
    const row = await retrying(id)
    expect(row).toMatchObject({ status: 'queued', errorMessage: expect.stringContaining('Twilio') })
    await twilio.failSends(c.account_sid, null)
    vi.setSystemTime(T0 + retryDelayMs(0))
    await runDurableObjectAlarm(accountStub(env, t.tenantId, c.number))
    expect(await settled(t, id)).toMatchObject({ status: 'sent', error: null })
    expect((await twilio.state(c.account_sid)).messages).toHaveLength(1)
  })
})
