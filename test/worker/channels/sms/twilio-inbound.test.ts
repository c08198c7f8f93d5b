/**
 * Twilio's inbound SMS webhook: signed by the twilio package (through the fake), verified over the URL as
 * configured; forged or missing signatures store nothing, a repeated MessageSid is stored once, STOP/START and
 * OptOutType set the contact's opt-out. MMS media: twilio-mms.test.ts.
 */
import { and, eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { contacts, messages } from '../../../../schema/d1'
import { twilioSignature, urlVariants } from '../../../../worker/channels/sms/twilio-signature'
import { body, call, newTenant, send } from '../../helpers'
import { db, eventsOf } from '../../state'
import { connectTwilio, post, twilio } from './sms-helpers'

const FROM = '+447700900555'

async function inboundRows(tenantId: string) {
  return db
    .select()
    .from(messages)
    .where(and(eq(messages.tenantId, tenantId), eq(messages.direction, 'inbound')))
}

describe('POST /v1/channels/sms/twilio/{tenant}/{number}/inbound', () => {
  it('stores a signed inbound SMS once, answers empty TwiML, and emits message.received', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const p = await twilio.inbound(c.account_sid, { to: c.number, from: FROM, body: 'Hello there' })
    const res = await post(p)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/xml')
    expect(await res.text()).toContain('<Response></Response>')
    const list = await body<{ messages: { text: string; status: string; contact: { phone: string } }[] }>(
      await call('/v1/messages?direction=inbound', { key: t.key })
    )
    expect(list.messages).toEqual([
      expect.objectContaining({ text: 'Hello there', status: 'received', account_id: c.number, contact: expect.objectContaining({ phone: FROM }) }),
    ])
    expect(await eventsOf(t.tenantId, 'message.received')).toHaveLength(1)
  })

  it('stores a replayed MessageSid once', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const p = await twilio.inbound(c.account_sid, { to: c.number, from: FROM, body: 'once' })
    expect((await post(p)).status).toBe(200)
    expect((await post(p)).status).toBe(200)
    expect(await inboundRows(t.tenantId)).toHaveLength(1)
  })

  it('refuses a forged signature (signed with another token) with 403 and stores nothing', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const p = await twilio.inbound(c.account_sid, { to: c.number, from: FROM, body: 'forged', sign_with: 'not-the-token' })
    const res = await post(p)
    expect(res.status).toBe(403)
    expect(await body(res)).toEqual({ success: false, error: expect.stringContaining('signature'), error_code: 403 })
    expect(await inboundRows(t.tenantId)).toHaveLength(0)
  })

  it('refuses a missing signature and a tampered body with 403', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const p = await twilio.inbound(c.account_sid, { to: c.number, from: FROM, body: 'original' })
    expect((await post(p, { headers: { 'X-Twilio-Signature': null } })).status).toBe(403)
    expect((await post(p, { body: p.body.replace('original', 'changed') })).status).toBe(403)
    expect(await inboundRows(t.tenantId)).toHaveLength(0)
  })

  it('accepts the signature computed over the URL with the default port, as Twilio may send it', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const p = await twilio.inbound(c.account_sid, { to: c.number, from: FROM, body: 'port' })
    const withPort = p.url.replace('https://gateway.test/', 'https://gateway.test:443/')
    const valid = await twilio.validate({ auth_token: c.auth_token, signature: p.headers['X-Twilio-Signature']!, url: withPort, params: p.params })
    expect(valid.valid).toBe(true)
    const signature = await twilioSignature(c.auth_token, withPort, p.params)
    expect((await post(p, { headers: { 'X-Twilio-Signature': signature } })).status).toBe(200)
    expect(await inboundRows(t.tenantId)).toHaveLength(1)
  })

  it('computes the same signature as the twilio package for repeated and unsorted params', async () => {
    const params = { Zeta: '1', Alpha: ['b', 'a', 'b'], Body: 'héllo & <x>' }
    const url = 'https://gateway.test/v1/channels/sms/x?b=2&a=1'
    const signature = await twilioSignature('tok', url, params)
    const valid = await twilio.validate({ auth_token: 'tok', signature, url, params: params as unknown as Record<string, string> })
    expect(valid.valid).toBe(true)
    expect(urlVariants('https://h.test/p?q=1')).toEqual(['https://h.test/p?q=1', 'https://h.test:443/p?q=1'])
  })

  it('answers 404 for a number that is not connected, storing nothing', async () => {
    const t = await newTenant()
    const res = await call(`/v1/channels/sms/twilio/${t.tenantId}/447700900000/inbound`, { method: 'POST', body: 'From=x' })
    expect(res.status).toBe(404)
  })
})

describe('STOP and START', () => {
  async function contactOf(tenantId: string) {
    return db
      .select()
      .from(contacts)
      .where(and(eq(contacts.tenantId, tenantId), eq(contacts.phone, FROM)))
      .get()
  }

  it('STOP opts the contact out (sends answer 422 contact_opted_out), START opts back in', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    await post(await twilio.inbound(c.account_sid, { to: c.number, from: FROM, body: 'hi' }))
    expect((await send(t, { to: { phone: FROM }, text: 'reply' })).status).toBe(202)
    await post(await twilio.inbound(c.account_sid, { to: c.number, from: FROM, body: ' stop ' }))
    expect((await contactOf(t.tenantId))?.optedOut).toBe(true)
    const refused = await send(t, { to: { phone: FROM }, text: 'still there?' })
    expect(refused).toMatchObject({ status: 422, body: { error_code: 'contact_opted_out' } })
    await post(await twilio.inbound(c.account_sid, { to: c.number, from: FROM, body: 'START' }))
    expect((await contactOf(t.tenantId))?.optedOut).toBe(false)
    expect((await send(t, { to: { phone: FROM }, text: 'welcome back' })).status).toBe(202)
  })

  it('honours OptOutType from Advanced Opt-Out for a custom keyword', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    await post(await twilio.inbound(c.account_sid, { to: c.number, from: FROM, body: 'ARRET', opt_out_type: 'STOP' }))
    expect((await contactOf(t.tenantId))?.optedOut).toBe(true)
    await post(await twilio.inbound(c.account_sid, { to: c.number, from: FROM, body: 'REPRENDRE', opt_out_type: 'START' }))
    expect((await contactOf(t.tenantId))?.optedOut).toBe(false)
  })

  it('does not opt out on a sentence that only contains stop', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    await post(await twilio.inbound(c.account_sid, { to: c.number, from: FROM, body: 'please stop by later' }))
    expect((await contactOf(t.tenantId))?.optedOut).toBe(false)
  })
})
