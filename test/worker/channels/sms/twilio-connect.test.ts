/** POST /v1/channels/sms/twilio (connect_sms) against the fake Twilio, and the +1 (A2P) rule on connect and send. */
import { describe, expect, it } from 'vitest'
import { body, call, newTenant, send } from '../../helpers'
import { db } from '../../state'
import { connectTwilio, twilio } from './sms-helpers'
import { accounts, channelConnections } from '../../../../schema/d1'
import { and, eq } from 'drizzle-orm'

const UK = '+447700900123'
const US = '+14155550100'

async function connect(key: string, json: Record<string, unknown>) {
  const res = await call('/v1/channels/sms/twilio', { method: 'POST', key, json })
  return { status: res.status, json: await body(res) }
}

describe('POST /v1/channels/sms/twilio', () => {
  it('checks the credentials, points the number at its inbound URL and answers the state without the token', async () => {
    const t = await newTenant()
    const acct = await twilio.createAccount([{ phone_number: UK, mms: true }])
    const r = await connect(t.key, { account_sid: acct.account_sid, auth_token: acct.auth_token, phone_number: UK })
    expect(r.status).toBe(200)
    const inboundUrl = `https://gateway.test/v1/channels/sms/twilio/${t.tenantId}/447700900123/inbound`
    expect(r.json).toMatchObject({
      success: true,
      phone_number: UK,
      account_id: UK,
      status: 'connected',
      sends_via: 'twilio',
      twilio: { status: 'connected', capabilities: { sms: true, mms: true }, inbound_url: inboundUrl, a2p: { required: false, state: 'not_required' } },
      android_gateway: null,
    })
    expect(JSON.stringify(r.json)).not.toContain(acct.auth_token)
    expect(JSON.stringify(r.json)).not.toContain(acct.account_sid)
    const state = await twilio.state(acct.account_sid)
    expect(state.numbers[0]).toMatchObject({ sms_url: inboundUrl, sms_method: 'POST' })
    const listed = await body<{ accounts: { id: string; channel: string; status: string }[] }>(await call('/v1/accounts', { key: t.key }))
    expect(listed.accounts).toEqual([expect.objectContaining({ id: UK, channel: 'sms', status: 'connected' })])
  })

  it('stores the auth token sealed: the D1 row does not contain it', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const row = await db
      .select()
      .from(channelConnections)
      .where(and(eq(channelConnections.tenantId, t.tenantId), eq(channelConnections.accountId, UK)))
      .get()
    expect(row?.kind).toBe('sms')
    expect(row?.config).not.toContain(c.auth_token)
    expect(row?.config.startsWith('v2.default.')).toBe(true)
  })

  it('refuses wrong credentials with 400 invalid_provider_credentials and stores nothing', async () => {
    const t = await newTenant()
    const acct = await twilio.createAccount([{ phone_number: UK }])
    const r = await connect(t.key, { account_sid: acct.account_sid, auth_token: 'wrong-token', phone_number: UK })
    expect(r).toEqual({ status: 400, json: { success: false, error: 'Twilio refused these credentials', error_code: 400 } })
    expect(await db.select().from(accounts).where(eq(accounts.tenantId, t.tenantId))).toEqual([])
  })

  it('answers 404 for a number that is not on the Twilio account', async () => {
    const t = await newTenant()
    const acct = await twilio.createAccount([{ phone_number: UK }])
    const r = await connect(t.key, { account_sid: acct.account_sid, auth_token: acct.auth_token, phone_number: '+447700900999' })
    expect(r.status).toBe(404)
    expect(String(r.json.error)).toContain('not a number of this Twilio account')
  })

  it('answers 422 for a number without SMS capability', async () => {
    const t = await newTenant()
    const acct = await twilio.createAccount([{ phone_number: UK, sms: false }])
    const r = await connect(t.key, { account_sid: acct.account_sid, auth_token: acct.auth_token, phone_number: UK })
    expect(r.status).toBe(422)
  })

  it('refuses an invalid body with 400 before asking Twilio', async () => {
    const t = await newTenant()
    const r = await connect(t.key, { account_sid: 'nope', auth_token: 'x', phone_number: UK })
    expect(r.status).toBe(400)
  })

  it('asks for the API key', async () => {
    const res = await call('/v1/channels/sms/twilio', { method: 'POST', json: {} })
    expect(res.status).toBe(401)
  })

  it('counts the number against the plan cap: a second number is refused with account_cap_reached', async () => {
    const t = await newTenant()
    await connectTwilio(t)
    const acct = await twilio.createAccount([{ phone_number: '+447700900456' }])
    const r = await connect(t.key, { account_sid: acct.account_sid, auth_token: acct.auth_token, phone_number: '+447700900456' })
    expect(r.status).toBe(409)
    expect(String(r.json.error)).toContain('plan allows 1')
    // Refused before the number was touched.
    expect((await twilio.state(acct.account_sid)).numbers[0]!.sms_url).not.toContain('gateway.test')
  })

  it('is idempotent: connecting the same number again keeps one account', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const again = await connect(t.key, { account_sid: c.account_sid, auth_token: c.auth_token, phone_number: UK })
    expect(again.status).toBe(200)
    expect(await db.select().from(accounts).where(eq(accounts.tenantId, t.tenantId))).toHaveLength(1)
  })
})

describe('the +1 rule (A2P 10DLC)', () => {
  it('refuses a +1 number without a2p_registered with 409 a2p_unconfirmed, before touching Twilio', async () => {
    const t = await newTenant()
    const acct = await twilio.createAccount([{ phone_number: US }])
    const r = await connect(t.key, { account_sid: acct.account_sid, auth_token: acct.auth_token, phone_number: US })
    expect(r.status).toBe(409)
    // The status-shaped body (error_code 409) names the spec's code in its message.
    expect(r.json).toEqual({ success: false, error: expect.stringMatching(/^a2p_unconfirmed: /), error_code: 409 })
    expect(String(r.json.error)).toContain('a2p_registered')
    expect((await twilio.state(acct.account_sid)).numbers[0]!.sms_url).not.toContain('gateway.test')
  })

  it('accepts a claimed registration, refuses sends with a2p_unconfirmed until Twilio shows a VERIFIED campaign, then sends', async () => {
    const t = await newTenant()
    const acct = await twilio.createAccount([{ phone_number: US }])
    const service = await twilio.addService(acct.account_sid, [US], 'PENDING')
    const r = await connect(t.key, { account_sid: acct.account_sid, auth_token: acct.auth_token, phone_number: US, a2p_registered: true })
    expect(r.status).toBe(200)
    expect(r.json.twilio).toMatchObject({
      a2p: { required: true, registered: true, state: 'unconfirmed', messaging_service_sid: service.sid, campaign_status: 'PENDING' },
    })

    const refused = await send(t, { to: { phone: '+14155550199' }, text: 'hello' })
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ error_code: 'a2p_unconfirmed' })

    await twilio.setCampaign(acct.account_sid, service.sid, 'VERIFIED')
    // The status call asks Twilio again every time.
    const status = await body(await call('/v1/channels/sms', { key: t.key }))
    expect(status.twilio).toMatchObject({ a2p: { state: 'confirmed', campaign_status: 'VERIFIED' }, live: true })
    const ok = await send(t, { to: { phone: '+14155550199' }, text: 'hello' })
    expect(ok.status).toBe(202)
  })

  it('confirms a toll-free number by its toll-free verification (TWILIO_APPROVED), never by a 10DLC campaign', async () => {
    const TOLL_FREE = '+18885550142'
    const t = await newTenant()
    const OTHER_TOLL_FREE = '+18335550199'
    const acct = await twilio.createAccount([{ phone_number: TOLL_FREE }, { phone_number: OTHER_TOLL_FREE }])
    // A verified campaign holding the number says nothing about a toll-free number, nor does another number's approval.
    await twilio.addService(acct.account_sid, [TOLL_FREE], 'VERIFIED')
    await twilio.setTollfree(acct.account_sid, OTHER_TOLL_FREE, 'TWILIO_APPROVED')
    const r = await connect(t.key, { account_sid: acct.account_sid, auth_token: acct.auth_token, phone_number: TOLL_FREE, a2p_registered: true })
    expect(r.status).toBe(200)
    expect(r.json.twilio).toMatchObject({
      a2p: { required: true, state: 'unconfirmed', registration: 'toll_free_verification', messaging_service_sid: null, campaign_status: null },
    })
    const refused = await send(t, { to: { phone: '+14155550199' }, text: 'hello' })
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ error_code: 'a2p_unconfirmed', error: expect.stringContaining('toll-free verification') })

    await twilio.setTollfree(acct.account_sid, TOLL_FREE, 'IN_REVIEW')
    const reviewing = await body(await call('/v1/channels/sms', { key: t.key }))
    expect(reviewing.twilio).toMatchObject({ a2p: { state: 'unconfirmed', campaign_status: 'IN_REVIEW' } })

    await twilio.setTollfree(acct.account_sid, TOLL_FREE, 'TWILIO_APPROVED')
    const approved = await body(await call('/v1/channels/sms', { key: t.key }))
    expect(approved.twilio).toMatchObject({ a2p: { state: 'confirmed', registration: 'toll_free_verification', campaign_status: 'TWILIO_APPROVED' } })
    expect((await send(t, { to: { phone: '+14155550199' }, text: 'hello' })).status).toBe(202)
  })

  it('names A2P 10DLC as what confirms an ordinary +1 number, and nothing for other countries', async () => {
    const t = await newTenant()
    const acct = await twilio.createAccount([{ phone_number: US }])
    const r = await connect(t.key, { account_sid: acct.account_sid, auth_token: acct.auth_token, phone_number: US, a2p_registered: true })
    expect(r.json.twilio).toMatchObject({ a2p: { registration: 'a2p_10dlc' } })
    const other = await newTenant()
    const uk = await twilio.createAccount([{ phone_number: '+447700900123' }])
    const r2 = await connect(other.key, { account_sid: uk.account_sid, auth_token: uk.auth_token, phone_number: '+447700900123' })
    expect(r2.json.twilio).toMatchObject({ a2p: { required: false, state: 'not_required', registration: null } })
  })

  it('does not confirm a +1 number that is in no Messaging Service', async () => {
    const t = await newTenant()
    const acct = await twilio.createAccount([{ phone_number: US }])
    const r = await connect(t.key, { account_sid: acct.account_sid, auth_token: acct.auth_token, phone_number: US, a2p_registered: true })
    expect(r.json.twilio).toMatchObject({ a2p: { state: 'unconfirmed', messaging_service_sid: null } })
  })
})
