/**
 * /v1/channels/alpha-web (spec 4.3) against a scripted relay on a real WebSocket: connect, QR, pairing code,
 * status, disconnect, and the account moves and events a linked session causes.
 */
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { body, call, connectCustom, newTenant, type TestTenant } from '../../helpers'
import { closeRelaysAfterEach, FakeRelay, issueRelay, uniquePhone } from '../../relay-helpers'

const relays = closeRelaysAfterEach()

const newPhone = () => uniquePhone('1555')

async function ownRelay(t: TestTenant): Promise<FakeRelay> {
  const { token } = await issueRelay(t.tenantId)
  const relay = await FakeRelay.open(token)
  relays.push(relay)
  return relay
}

function connect(t: TestTenant, json: Record<string, unknown>) {
  return call('/v1/channels/alpha-web/connections', { method: 'POST', key: t.key, json })
}

const path = (phone: string) => `/v1/channels/alpha-web/connections/${encodeURIComponent(phone)}`

async function events(tenantId: string, type?: string) {
  const q = type
    ? 'SELECT type, payload FROM events WHERE tenant_id = ? AND type = ? ORDER BY created_at'
    : 'SELECT type, payload FROM events WHERE tenant_id = ? ORDER BY created_at'
  const r = type
    ? await env.DB.prepare(q).bind(tenantId, type).all<{ type: string; payload: string }>()
    : await env.DB.prepare(q).bind(tenantId).all<{ type: string; payload: string }>()
  return r.results.map((e) => ({ type: e.type, payload: JSON.parse(e.payload) as Record<string, unknown> }))
}

/** Connects a number and brings its session to `connected` through the relay. */
async function linked(t: TestTenant, relay: FakeRelay, phone = newPhone()) {
  expect((await connect(t, { phone_number: phone })).status).toBe(200)
  const assign = await relay.next('assign', (a) => a.account.accountId === phone)
  await relay.state(assign, { state: 'connected', identifier: phone, upstreamUserId: null })
  return { phone, assign }
}

describe('POST /v1/channels/alpha-web/connections', () => {
  it('lists the account as connecting with ramp_day 1 and hands the session to a relay', async () => {
    const t = await newTenant()
    const relay = await ownRelay(t)
    const phone = newPhone()
    const res = await connect(t, { phone_number: phone })
    expect(res.status).toBe(200)
    const r = await body<Record<string, unknown>>(res)
    expect(r).toMatchObject({
      success: true,
      phone_number: phone,
      status: 'qr_pending',
      link_method: 'qr',
      pairing_code: null,
      poll_qr_path: `/channels/alpha-web/connections/${encodeURIComponent(phone)}/qr`,
      poll_status_path: `/channels/alpha-web/connections/${encodeURIComponent(phone)}/status`,
    })
    expect(r.session_id).toMatch(/^ses_/)
    expect(r.connect_url).toMatch(/^https:\/\/gateway\.test\/connect\/alpha-web\?token=/)
    expect(r.connect_url_expires_at).toBeGreaterThan(Date.now())

    const accounts = await body<{ accounts: Array<Record<string, unknown>> }>(await call('/v1/accounts', { key: t.key }))
    expect(accounts.accounts).toEqual([
      expect.objectContaining({ id: phone, channel: 'alpha_web', status: 'connecting', limits: expect.objectContaining({ ramp_day: 1 }) }),
    ])

    const assign = await relay.next('assign', (a) => a.account.accountId === phone)
    expect(assign).toMatchObject({
      sid: r.session_id,
      fence: 1,
      account: { tenantId: t.tenantId, phone, channel: 'alpha_web' },
      linkMethod: 'qr',
      forceNew: false,
      importContacts: false,
    })
  })

  it('refuses a number that is not E.164', async () => {
    const t = await newTenant()
    const res = await connect(t, { phone_number: '5551234' })
    expect(res.status).toBe(400)
    expect(await body(res)).toMatchObject({ success: false, error_code: 400 })
  })

  it('refuses import_existing_chats without import_contacts', async () => {
    const t = await newTenant()
    const res = await connect(t, { phone_number: newPhone(), import_existing_chats: true })
    expect(res.status).toBe(400)
    expect((await body<{ error: string }>(res)).error).toContain('import_existing_chats: requires import_contacts')
  })

  it('refuses mark_imported_contacts_as_private together with import_existing_chats', async () => {
    const t = await newTenant()
    const res = await connect(t, { phone_number: newPhone(), import_contacts: true, import_existing_chats: true, mark_imported_contacts_as_private: true })
    expect(res.status).toBe(400)
    expect((await body<{ error: string }>(res)).error).toContain('mark_imported_contacts_as_private')
  })

  it('refuses a second account beyond the plan cap with 409', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const res = await connect(t, { phone_number: newPhone() })
    expect(res.status).toBe(409)
    expect(await body(res)).toMatchObject({ success: false, error_code: 409 })
  })

  it('needs an API key', async () => {
    const res = await call('/v1/channels/alpha-web/connections', { method: 'POST', json: { phone_number: newPhone() } })
    expect(res.status).toBe(401)
  })

  it('answers the pairing code once the relay reports it', async () => {
    const t = await newTenant()
    const relay = await ownRelay(t)
    const phone = newPhone()
    const pending = connect(t, { phone_number: phone, link_method: 'pairing_code' })
    const assign = await relay.next('assign', (a) => a.account.accountId === phone)
    expect(assign.linkMethod).toBe('pairing_code')
    await relay.state(assign, { state: 'pairing_code', code: 'K7QX3M9P', expiresAt: Date.now() + 60_000 })
    const r = await body<Record<string, unknown>>(await pending)
    expect(r).toMatchObject({ status: 'qr_pending', link_method: 'pairing_code', pairing_code: 'K7QX3M9P' })
  })

  it('says no relay is available when none can take the session', async () => {
    const t = await newTenant()
    await issueRelay(t.tenantId) // the tenant runs its own relays, none of them connected
    const phone = newPhone()
    const r = await body<Record<string, unknown>>(await connect(t, { phone_number: phone }))
    expect(r).toMatchObject({ status: 'qr_pending', reason: 'relay_unavailable' })
  })

  it('changes nothing for a connected number unless force_new is set', async () => {
    const t = await newTenant()
    const relay = await ownRelay(t)
    const { phone, assign } = await linked(t, relay)
    const again = await body<Record<string, unknown>>(await connect(t, { phone_number: phone }))
    expect(again).toMatchObject({ status: 'connected', session_id: assign.sid, connect_url: null })

    const forced = await body<Record<string, unknown>>(await connect(t, { phone_number: phone, force_new: true }))
    expect(forced.status).toBe('qr_pending')
    expect(forced.session_id).not.toBe(assign.sid)
    await expect(relay.next('revoke', (r) => r.sid === assign.sid)).resolves.toMatchObject({ reason: 'moved' })
    const next = await relay.next('assign', (a) => a.account.accountId === phone)
    expect(next).toMatchObject({ sid: forced.session_id, forceNew: true })
    expect(next.fence).toBeGreaterThan(assign.fence)
  })
})

describe('GET /v1/channels/alpha-web/connections/{phoneNumber}/qr', () => {
  it('answers the raw QR and a PNG data URL rendered at the edge', async () => {
    const t = await newTenant()
    const relay = await ownRelay(t)
    const phone = newPhone()
    await connect(t, { phone_number: phone })
    const assign = await relay.next('assign', (a) => a.account.accountId === phone)
    const expiresAt = Date.now() + 60_000
    await relay.state(assign, { state: 'qr_pending', qr: '2@abc,def,ghi,jkl', expiresAt })
    const r = await body<Record<string, string | null>>(await call(`${path(phone)}/qr`, { key: t.key }))
    expect(r).toMatchObject({
      success: true,
      phone_number: phone,
      status: 'qr_pending',
      qr_code: '2@abc,def,ghi,jkl',
      expires_at: new Date(expiresAt).toISOString(),
    })
    expect(r.qr_data_url).toMatch(/^data:image\/png;base64,iVBORw0KGgo/)
  })

  it('accepts the number without URL-encoding its +', async () => {
    const t = await newTenant()
    const phone = newPhone()
    await connect(t, { phone_number: phone })
    expect((await call(`/v1/channels/alpha-web/connections/${phone}/qr`, { key: t.key })).status).toBe(200)
  })

  it('answers 404 for a number that is not on the account, or on another tenant', async () => {
    const [a, b] = [await newTenant(), await newTenant()]
    const phone = newPhone()
    await connect(a, { phone_number: phone })
    const res = await call(`${path(phone)}/qr`, { key: b.key })
    expect(res.status).toBe(404)
    expect(await body(res)).toEqual({ success: false, error: expect.any(String), error_code: 404 })
  })
})

describe('GET /v1/channels/alpha-web/connections/{phoneNumber}/status', () => {
  it('reports connected live from the relay, with the account connected and account.connected emitted', async () => {
    const t = await newTenant()
    const relay = await ownRelay(t)
    const { phone, assign } = await linked(t, relay)
    const pending = call(`${path(phone)}/status`, { key: t.key })
    const probe = await relay.next('probe', (p) => p.sid === assign.sid)
    relay.send({ type: 'probe_result', id: probe.id, sid: assign.sid, state: { state: 'connected', identifier: phone, upstreamUserId: null } })
    const r = await body<Record<string, unknown>>(await pending)
    expect(r).toMatchObject({
      success: true,
      phone_number: phone,
      status: 'connected',
      account_status: 'connected',
      live: true,
      has_qr: false,
      message_count: 0,
      proxy: null,
      session_id: assign.sid,
    })
    expect(r.last_activity).toEqual(expect.any(String))
    const connected = await events(t.tenantId, 'account.connected')
    expect(connected).toHaveLength(1)
    expect(connected[0]!.payload).toMatchObject({ account_id: phone, channel: 'alpha_web', account: { id: phone, status: 'connected', reason: null } })
  })

  it('answers not_initialized for a number with no session here: never connected, removed, or another tenant’s', async () => {
    const t = await newTenant()
    const other = await newTenant()
    const phone = newPhone()
    await connect(t, { phone_number: phone })
    const none = {
      success: true,
      session_id: null,
      status: 'not_initialized',
      account_status: null,
      reason: null,
      message: null,
      has_qr: false,
      qr_expires_at: null,
      last_activity: null,
      message_count: null,
      live: false,
    }
    expect(await body(await call(`${path(phone)}/status`, { key: other.key }))).toMatchObject({ ...none, phone_number: phone })
    const never = newPhone()
    expect(await body(await call(`${path(never)}/status`, { key: t.key }))).toMatchObject({ ...none, phone_number: never })
    expect(await body(await call(path(phone), { method: 'DELETE', key: t.key }))).toMatchObject({ status: 'removed' })
    expect(await body(await call(`${path(phone)}/status`, { key: t.key }))).toMatchObject({ ...none, phone_number: phone })
  })

  it('answers from the last report with live false when the relay does not answer', async () => {
    const t = await newTenant()
    const relay = await ownRelay(t)
    const { phone } = await linked(t, relay)
    const r = await body<Record<string, unknown>>(await call(`${path(phone)}/status`, { key: t.key }))
    expect(r).toMatchObject({ status: 'connected', live: false })
  })

  it('explains a passkey demand instead of cycling QR codes', async () => {
    const t = await newTenant()
    const relay = await ownRelay(t)
    const phone = newPhone()
    await connect(t, { phone_number: phone })
    const assign = await relay.next('assign', (a) => a.account.accountId === phone)
    await relay.state(assign, { state: 'disconnected', problem: 'passkey_required', message: 'The phone asks for a passkey to link a new device.' })
    relay.close()
    const r = await body<Record<string, unknown>>(await call(`${path(phone)}/status`, { key: t.key }))
    expect(r).toMatchObject({
      status: 'disconnected',
      reason: 'passkey_required',
      message: 'The phone asks for a passkey to link a new device.',
      has_qr: false,
      live: false,
    })
  })

  it('moves a logged-out account to disconnected and a banned one to restricted, each with its event', async () => {
    const t = await newTenant()
    const relay = await ownRelay(t)
    const { phone, assign } = await linked(t, relay)
    await relay.state(assign, { state: 'disconnected', problem: 'logged_out', message: 'Logged out from the phone.' })
    let accounts = await body<{ accounts: Array<{ status: string; status_reason: string }> }>(await call('/v1/accounts', { key: t.key }))
    expect(accounts.accounts[0]).toMatchObject({ status: 'disconnected', status_reason: 'logged_out' })
    await relay.state(assign, { state: 'restricted', problem: 'blocked_by_alpha', message: 'The number is banned.', until: null })
    accounts = await body(await call('/v1/accounts', { key: t.key }))
    expect(accounts.accounts[0]).toMatchObject({ status: 'restricted', status_reason: 'blocked_by_alpha' })
    expect((await events(t.tenantId)).map((e) => [e.type, (e.payload.account as { reason: string }).reason])).toEqual([
      ['account.connected', null],
      ['account.disconnected', 'logged_out'],
      ['account.restricted', 'blocked_by_alpha'],
    ])
    expect(phone).toBeTruthy()
  })
})

describe('DELETE /v1/channels/alpha-web/connections/{phoneNumber}', () => {
  it('logs the session out through the relay and removes the number', async () => {
    const t = await newTenant()
    const relay = await ownRelay(t)
    const { phone, assign } = await linked(t, relay)
    const res = await call(path(phone), { method: 'DELETE', key: t.key })
    expect(await body(res)).toEqual({ success: true, phone_number: phone, status: 'removed' })
    await expect(relay.next('logout', (l) => l.sid === assign.sid)).resolves.toMatchObject({ fence: assign.fence })
    expect((await body<{ accounts: unknown[] }>(await call('/v1/accounts', { key: t.key }))).accounts).toEqual([])
    expect((await events(t.tenantId, 'account.disconnected'))[0]!.payload).toMatchObject({ account: { reason: 'removed', status: 'disconnected' } })
  })

  it('is idempotent and succeeds with no relay reachable', async () => {
    const t = await newTenant()
    const phone = newPhone()
    await connect(t, { phone_number: phone })
    expect(await body(await call(path(phone), { method: 'DELETE', key: t.key }))).toMatchObject({ status: 'removed' })
    expect(await body(await call(path(phone), { method: 'DELETE', key: t.key }))).toMatchObject({ status: 'disconnected' })
  })
})
