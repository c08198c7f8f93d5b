/**
 * /v1/channels/beta (spec 4.4) against a scripted relay on a real WebSocket: connect by code and by QR, the verify
 * steps through login frames, status, removal, the slow-down reason and the existing-contact rule.
 */
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import type { FrameOf } from '../../../schema/frames'
import { body, call, newTenant, send, type TestTenant } from '../helpers'
import { closeRelaysAfterEach, FakeRelay, issueRelay, uniquePhone } from '../relay-helpers'

const relays = closeRelaysAfterEach()
const newPhone = () => uniquePhone('1444')

async function betaRelay(t: TestTenant): Promise<FakeRelay> {
  const { token } = await issueRelay(t.tenantId)
  const relay = await FakeRelay.open(token, { channels: ['beta'] })
  relays.push(relay)
  return relay
}

const connect = (t: TestTenant, json: Record<string, unknown>) => call('/v1/channels/beta/connect', { method: 'POST', key: t.key, json })
const enc = (phone: string) => encodeURIComponent(phone)
const verify = (t: TestTenant, phone: string, step: 'code' | 'password', json: Record<string, unknown>) =>
  call(`/v1/channels/beta/connect/${enc(phone)}/${step}`, { method: 'POST', key: t.key, json })
const status = (t: TestTenant, phone: string) => call(`/v1/channels/beta/connect/${enc(phone)}/status`, { key: t.key })

/** Starts a code-mode connect; the relay reports `code_required` while the call waits for it. */
async function codeRequired(t: TestTenant, relay: FakeRelay, phone = newPhone()) {
  const pending = connect(t, { phone_number: phone })
  const assign = await relay.next('assign', (a) => a.account.accountId === phone)
  await relay.state(assign, { state: 'code_required', expiresAt: Date.now() + 1_800_000 })
  const res = await pending
  return { phone, assign, res }
}

/** Answers the next login frame of the session like a relay. */
async function answerLogin(relay: FakeRelay, assign: FrameOf<'assign'>, outcome: FrameOf<'login_result'>['outcome']) {
  const frame = await relay.next('login', (f) => f.sid === assign.sid)
  relay.send({ type: 'login_result', id: frame.id, sid: frame.sid, outcome })
  return frame
}

describe('POST /v1/channels/beta/connect', () => {
  it('lists the account as connecting, hands a code-mode session to a beta relay and answers code_required', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { phone, assign, res } = await codeRequired(t, relay)
    expect(assign).toMatchObject({ account: { channel: 'beta', phone }, linkMethod: 'code', importContacts: true })
    expect(res.status).toBe(200)
    expect(await body(res)).toMatchObject({ success: true, phone_number: phone, status: 'code_required', session_id: assign.sid })
    const accounts = await body<{ accounts: Array<Record<string, unknown>> }>(await call('/v1/accounts', { key: t.key }))
    expect(accounts.accounts).toEqual([
      expect.objectContaining({ id: phone, channel: 'beta', status: 'connecting', limits: expect.objectContaining({ ramp_day: null }) }),
    ])
  })

  it('answers qr_required with the login token and its tg://login link in qr mode', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const phone = newPhone()
    const pending = connect(t, { phone_number: phone, mode: 'qr' })
    const assign = await relay.next('assign', (a) => a.account.accountId === phone)
    expect(assign.linkMethod).toBe('qr')
    await relay.state(assign, { state: 'qr_pending', qr: 'tg://login?token=AbC-_123', expiresAt: Date.now() + 30_000 })
    expect(await body(await pending)).toMatchObject({ status: 'qr_required', login_token: 'AbC-_123', qr_url: 'tg://login?token=AbC-_123' })
  })

  it('answers initializing when no relay runs beta yet', async () => {
    const t = await newTenant()
    const phone = newPhone()
    const res = await connect(t, { phone_number: phone })
    expect(await body(res)).toMatchObject({
      success: true,
      status: 'initializing',
      connect_url: expect.stringContaining('/v1/channels/beta/connect/page?token='),
    })
    expect(await body(await status(t, phone))).toMatchObject({ status: 'initializing', reason: 'relay_unavailable', live: false })
    expect(await verify(t, phone, 'code', { code: '12345' }).then((r) => r.status)).toBe(503)
  })

  it('refuses a banned number with 403 (number_banned)', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const phone = newPhone()
    const pending = connect(t, { phone_number: phone })
    const assign = await relay.next('assign', (a) => a.account.accountId === phone)
    await relay.state(assign, { state: 'restricted', problem: 'blocked_by_beta', message: 'banned', until: null })
    const res = await pending
    expect(res.status).toBe(403)
    expect(await body(res)).toEqual({ success: false, error: expect.stringMatching(/^number_banned/), error_code: 403 })
  })

  it('refuses a bad body with 400 and a missing key with 401', async () => {
    const t = await newTenant()
    expect((await connect(t, { phone_number: '12' })).status).toBe(400)
    expect((await connect(t, { phone_number: newPhone(), mode: 'sms' })).status).toBe(400)
    expect((await call('/v1/channels/beta/connect', { method: 'POST', json: { phone_number: newPhone() } })).status).toBe(401)
  })
})

describe('POST /v1/channels/beta/connect/{phoneNumber}/code and /password', () => {
  it('passes the code to the relay once and answers connected with the account id and username', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { phone, assign } = await codeRequired(t, relay)
    const pending = verify(t, phone, 'code', { code: '24680' })
    const frame = await answerLogin(relay, assign, { status: 'connected', userId: '7000001', username: 'owner' })
    expect(frame.step).toEqual({ kind: 'code', code: '24680' })
    const res = await pending
    expect(res.status).toBe(200)
    const r = await body(res)
    expect(r).toEqual({ success: true, phone_number: phone, status: 'connected', telegram_user_id: '7000001', username: 'owner' })
    expect(JSON.stringify(r)).not.toContain('24680')
  })

  it('goes through password_required to connected', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { phone, assign } = await codeRequired(t, relay)
    const first = verify(t, phone, 'code', { code: '11111' })
    await answerLogin(relay, assign, { status: 'password_required', hint: 'pet' })
    expect(await body(await first)).toMatchObject({ status: 'password_required', telegram_user_id: null, password_hint: 'pet' })
    const second = verify(t, phone, 'password', { password: 'hunter2' })
    const frame = await answerLogin(relay, assign, { status: 'connected', userId: '7000002', username: null })
    expect(frame.step).toEqual({ kind: 'password', password: 'hunter2' })
    const r = await body(await second)
    expect(r).toMatchObject({ status: 'connected', telegram_user_id: '7000002' })
    expect(JSON.stringify(r)).not.toContain('hunter2')
  })

  it('maps every refusal to its own status with the stable code first in the message', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { phone, assign } = await codeRequired(t, relay)
    const cases = [
      ['code_invalid', 400],
      ['code_expired', 410],
      ['password_invalid', 422],
      ['too_many_attempts', 429],
      ['unknown_number', 404],
      ['number_banned', 403],
      ['no_login_pending', 409],
    ] as const
    for (const [error, httpStatus] of cases) {
      const pending = verify(t, phone, 'code', { code: '00000' })
      await answerLogin(relay, assign, { status: 'refused', error, message: 'because', retryAfterS: error === 'too_many_attempts' ? 60 : null })
      const res = await pending
      expect(res.status, error).toBe(httpStatus)
      expect(await body(res)).toEqual({ success: false, error: `${error}: because`, error_code: httpStatus })
      if (error === 'too_many_attempts') expect(res.headers.get('Retry-After')).toBe('60')
    }
  })

  it('answers 404 for a number with no beta account on this key, and 400 for an empty code', async () => {
    const t = await newTenant()
    expect((await verify(t, newPhone(), 'code', { code: '12345' })).status).toBe(404)
    expect((await verify(t, newPhone(), 'code', { code: '' })).status).toBe(400)
    expect((await verify(t, newPhone(), 'password', {})).status).toBe(400)
  })
})

describe('GET /v1/channels/beta/connect/{phoneNumber}/status', () => {
  it('follows the session: code_required, password_required, connected with telegram_user_id, slowed, logged out', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { phone, assign } = await codeRequired(t, relay)
    expect(await body(await status(t, phone))).toMatchObject({ status: 'code_required', telegram_user_id: null })
    await relay.state(assign, { state: 'password_required', hint: null, expiresAt: null })
    expect(await body(await status(t, phone))).toMatchObject({ status: 'password_required' })
    await relay.state(assign, { state: 'connected', identifier: phone, upstreamUserId: '7000003' })
    expect(await body(await status(t, phone))).toMatchObject({ status: 'connected', telegram_user_id: '7000003', reason: null })
    await relay.state(assign, { state: 'slowed', problem: 'flood_wait', message: 'slow down', until: Date.now() + 30_000 })
    expect(await body(await status(t, phone))).toMatchObject({ status: 'connected', reason: 'flood_wait' })
    const accounts = await body<{ accounts: Array<Record<string, unknown>> }>(await call('/v1/accounts', { key: t.key }))
    expect(accounts.accounts[0]).toMatchObject({ status: 'connected', status_reason: 'flood_wait' })
    await relay.state(assign, { state: 'disconnected', problem: 'logged_out', message: 'revoked' })
    expect(await body(await status(t, phone))).toMatchObject({ status: 'disconnected', reason: 'logged_out' })
  })

  it('answers not_initialized for a number with no session here: never connected, or another tenant’s (nothing of it shown)', async () => {
    const t = await newTenant()
    const other = await newTenant()
    const phone = newPhone()
    await connect(t, { phone_number: phone })
    const none = { success: true, phone_number: phone, status: 'not_initialized', reason: null, message: null, telegram_user_id: null, live: false }
    expect(await body(await status(other, phone))).toEqual(none)
    const never = newPhone()
    expect(await body(await status(t, never))).toEqual({ ...none, phone_number: never })
  })
})

describe('DELETE /v1/channels/beta/{phoneNumber}', () => {
  it('logs the session out through the relay and answers removed, also the second time', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { phone, assign } = await codeRequired(t, relay)
    const del = () => call(`/v1/channels/beta/${enc(phone)}`, { method: 'DELETE', key: t.key })
    expect(await body(await del())).toEqual({ success: true, phone_number: phone, status: 'removed' })
    await relay.next('logout', (f) => f.sid === assign.sid)
    expect(await body(await del())).toEqual({ success: true, phone_number: phone, status: 'removed' })
    expect(await body(await status(t, phone))).toMatchObject({ status: 'not_initialized', telegram_user_id: null, live: false })
  })
})

describe('sending on beta', () => {
  it('refuses a number outside the address book with 422 beta_requires_existing_contact, and sends to one in it', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { phone, assign } = await codeRequired(t, relay)
    await relay.state(assign, { state: 'connected', identifier: phone, upstreamUserId: '7000004' })
    const friend = newPhone()
    const refused = await send(t, { account_id: phone, to: { phone: newPhone() }, text: 'hi' })
    expect(refused.status).toBe(422)
    expect(refused.body).toMatchObject({ error_code: 'beta_requires_existing_contact' })
    await relay.request({
      type: 'contacts',
      id: relay.id(),
      sid: assign.sid,
      fence: assign.fence,
      contacts: [{ id: 'u8000001.123456789', phone: friend, lid: null, name: 'Fran', username: 'fran', hasChat: false }],
    })
    const ok = await send(t, { account_id: phone, to: { phone: friend }, text: 'hi Fran' })
    expect(ok.status).toBe(202)
    const sendFrame = await relay.next('send', (f) => f.sid === assign.sid)
    expect(sendFrame.message.to).toEqual({ phone: friend, peerId: 'u8000001.123456789' })
  })
})

describe('inbound on beta', () => {
  it("shows the sender's @username on the contact of the message and of message.received, and keeps it when a later message has none", async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { phone, assign } = await codeRequired(t, relay)
    await relay.state(assign, { state: 'connected', identifier: phone, upstreamUserId: '7000005' })
    const grace = newPhone()
    const inbound = (upstreamId: string, username: string | null, text: string) =>
      relay.request({
        type: 'inbound',
        id: relay.id(),
        sid: assign.sid,
        fence: assign.fence,
        message: { upstreamId, from: { id: 'u8000002.42', phone: grace, lid: null, name: 'Grace', username }, text, media: null, sentAt: Date.now() },
      })
    expect(await inbound('1', 'ghopper', 'Hello')).toMatchObject({ type: 'ack' })
    expect(await inbound('2', null, 'Again')).toMatchObject({ type: 'ack' })
    const list = (await body<{ messages: Array<{ contact: Record<string, unknown> }> }>(await call('/v1/messages', { key: t.key }))).messages
    expect(list.map((m) => m.contact)).toEqual([
      expect.objectContaining({ phone: grace, name: 'Grace', username: 'ghopper' }),
      expect.objectContaining({ phone: grace, name: 'Grace', username: 'ghopper' }),
    ])
    const events = await env.DB.prepare("SELECT payload FROM events WHERE tenant_id = ? AND type = 'message.received' ORDER BY created_at, rowid")
      .bind(t.tenantId)
      .all<{ payload: string }>()
    expect(events.results.map((e) => JSON.parse(e.payload).contact)).toEqual([
      { id: list[0]!.contact.id, phone: grace, name: 'Grace', username: 'ghopper' },
      { id: list[0]!.contact.id, phone: grace, name: 'Grace', username: 'ghopper' },
    ])
  })
})
