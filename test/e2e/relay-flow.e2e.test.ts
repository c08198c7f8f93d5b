/**
 * The alpha channel end to end: the real local server (wrangler dev), a real relay process in sim mode over real
 * WebSockets, the simulated network playing the phone, and a local receiver taking the signed webhook deliveries.
 * Connect → QR → link → connected and account.connected; inbound → wait and message.received; reply → the
 * contact's outbox and message.sent; receipts → delivered/read and their events; logout and ban → states and
 * events; pairing code; passkey; removal; tenant scope; token refusal. Every event is checked as a subscriber gets
 * it: one signed POST each, verified by the receiver with the subscription's secret, with the payload of spec part 6.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { enc, eventually, issueRelayToken, linkAlpha, newPhone, simGet, simPost, type Json } from './relay-harness'
import { relaySuite } from './relay-suite'
import { ISO_DATE_TIME } from './webhook-inbox'

const suite = relaySuite({ keepRelays: true })
const { api, tenantWithHook } = suite

beforeAll(async () => {
  await suite.relay((await issueRelayToken(suite.server)).token).linked
})

/** The payload of an account event as spec part 6 shows it, for an alpha number. */
function accountEvent(event: string, phone: string, status: string, reason: string | null) {
  return {
    event,
    created_at: ISO_DATE_TIME,
    account_id: phone,
    channel: 'alpha_web',
    account: { id: phone, channel: 'alpha_web', identifier: phone, status, reason },
  }
}

async function connectAndLink(key: string, phone = newPhone('1555')) {
  return { phone, ...(await linkAlpha(suite.server, suite.sim, key, phone)) }
}

describe('alpha through a relay in sim mode', () => {
  it('connects: QR from the relay, link on the phone, then connected with account.connected', async () => {
    const { key, hook } = await tenantWithHook()
    const { phone, started, qr } = await connectAndLink(key)
    expect(started).toMatchObject({ status: 'qr_pending', connect_url: expect.stringContaining('/connect/alpha-web?token=') })
    expect(qr.qr_data_url).toMatch(/^data:image\/png;base64,/)
    expect((await hook.next()).payload).toEqual(accountEvent('account.connected', phone, 'connected', null))
    const status = (await api(key, 'GET', `/channels/alpha-web/connections/${enc(phone)}/status`)).json
    expect(status).toMatchObject({ status: 'connected', account_status: 'connected', live: true })
    const accounts = (await api(key, 'GET', '/accounts')).json.accounts
    expect(accounts).toEqual([expect.objectContaining({ id: phone, status: 'connected', limits: expect.objectContaining({ ramp_day: 1 }) })])
    await hook.expectExactly(['account.connected'])
  })

  it('brings a contact’s message to a wait and a webhook, takes the reply to their phone, and moves it on receipts', async () => {
    const { key, hook } = await tenantWithHook()
    const { phone } = await connectAndLink(key)
    expect((await hook.next()).event).toBe('account.connected')
    const cursor = (await api(key, 'GET', '/messages/wait?timeout_s=0')).json.cursor
    const waiting = api(key, 'GET', `/messages/wait?timeout_s=20&cursor=${cursor}`)
    await simPost(suite.sim, `/alpha/${enc(phone)}/inbound`, { from: '+447700900111', text: 'Are you open today?', name: 'Ada' })
    const [got, received] = await Promise.all([waiting.then((r) => r.json.messages), hook.next()])
    expect(got).toEqual([
      expect.objectContaining({
        direction: 'inbound',
        status: 'received',
        text: 'Are you open today?',
        contact: expect.objectContaining({ phone: '+447700900111', name: 'Ada' }),
      }),
    ])
    const contact = { id: got[0].contact.id, phone: '+447700900111', name: 'Ada' }
    const inbound = { id: got[0].id, direction: 'inbound', text: 'Are you open today?', media: null, status: 'received', error: null }
    expect(received.payload).toEqual({
      event: 'message.received',
      created_at: ISO_DATE_TIME,
      account_id: phone,
      channel: 'alpha_web',
      message: inbound,
      contact,
    })

    const reply = await api(key, 'POST', '/messages', { to: { contact_id: contact.id }, text: 'Yes, until 6pm.' })
    expect(reply.status).toBe(202)
    const id = reply.json.message_id
    const outbound = (status: string) => ({
      event: `message.${status}`,
      created_at: ISO_DATE_TIME,
      account_id: phone,
      channel: 'alpha_web',
      message: { id, direction: 'outbound', text: 'Yes, until 6pm.', media: null, status, error: null },
      contact,
    })
    expect((await hook.next()).payload).toEqual(outbound('sent'))
    const outbox = (await simGet<{ messages: Json[] }>(suite.sim, `/alpha/${enc(phone)}/outbox`)).messages
    expect(outbox).toEqual([
      expect.objectContaining({ message_id: id, to: '+447700900111', text: 'Yes, until 6pm.', media_url: null, id: expect.stringMatching(/^3EB0/) }),
    ])

    await simPost(suite.sim, `/alpha/${enc(phone)}/receipt`, { message_id: id, status: 'delivered' })
    expect((await hook.next()).payload).toEqual(outbound('delivered'))
    await simPost(suite.sim, `/alpha/${enc(phone)}/receipt`, { message_id: outbox[0]!.id, status: 'read' })
    expect((await hook.next()).payload).toEqual(outbound('read'))
    expect((await api(key, 'GET', `/messages/${id}`)).json).toMatchObject({ id, direction: 'outbound', status: 'read' })
    await hook.expectExactly(['account.connected', 'message.received', 'message.sent', 'message.delivered', 'message.read'])
  })

  it('reports a logout from the phone as disconnected (logged_out) and a ban as restricted (blocked_by_alpha)', async () => {
    const a = await tenantWithHook()
    const { phone } = await connectAndLink(a.key)
    expect((await a.hook.next()).event).toBe('account.connected')
    await simPost(suite.sim, `/alpha/${enc(phone)}/logout`)
    expect((await a.hook.next()).payload).toEqual(accountEvent('account.disconnected', phone, 'disconnected', 'logged_out'))
    // The event commits with the status, so both read models show it once the webhook has come.
    expect((await api(a.key, 'GET', '/accounts')).json.accounts).toEqual([expect.objectContaining({ id: phone, status: 'disconnected' })])
    expect((await api(a.key, 'GET', `/channels/alpha-web/connections/${enc(phone)}/status`)).json).toMatchObject({
      status: 'disconnected',
      reason: 'logged_out',
    })
    await a.hook.expectExactly(['account.connected', 'account.disconnected'])

    const b = await tenantWithHook()
    const banned = await connectAndLink(b.key)
    expect((await b.hook.next()).event).toBe('account.connected')
    await simPost(suite.sim, `/alpha/${enc(banned.phone)}/ban`)
    expect((await b.hook.next()).payload).toEqual(accountEvent('account.restricted', banned.phone, 'restricted', 'blocked_by_alpha'))
    expect((await api(b.key, 'GET', '/accounts')).json.accounts).toEqual([expect.objectContaining({ id: banned.phone, status: 'restricted' })])
    await b.hook.expectExactly(['account.connected', 'account.restricted'])
  })

  it('links with a pairing code answered by the connect call', async () => {
    const { key, hook } = await tenantWithHook()
    const phone = newPhone('1555')
    const r = await api(key, 'POST', '/channels/alpha-web/connections', { phone_number: phone, link_method: 'pairing_code' })
    expect(r.json.pairing_code).toMatch(/^[1-9A-HJ-NP-Z]{8}$/)
    expect((await simGet(suite.sim, `/alpha/${enc(phone)}`)).pairing_code).toBe(r.json.pairing_code)
    await simPost(suite.sim, `/alpha/${enc(phone)}/link`)
    expect((await hook.next()).payload).toEqual(accountEvent('account.connected', phone, 'connected', null))
    expect((await api(key, 'GET', `/channels/alpha-web/connections/${enc(phone)}/status`)).json).toMatchObject({ status: 'connected' })
    await hook.expectExactly(['account.connected'])
  })

  it('says a passkey is required instead of cycling QR codes', async () => {
    const { key, hook } = await tenantWithHook()
    const phone = newPhone('1555')
    await api(key, 'POST', '/channels/alpha-web/connections', { phone_number: phone })
    await eventually(async () => (await api(key, 'GET', `/channels/alpha-web/connections/${enc(phone)}/qr`)).json.qr_code, 10_000, 'a QR code')
    await simPost(suite.sim, `/alpha/${enc(phone)}/link`, { passkey: true })
    // The link attempt ended: the account that was connecting is now disconnected, and a subscriber hears why.
    expect((await hook.next()).payload).toEqual(accountEvent('account.disconnected', phone, 'disconnected', 'passkey_required'))
    const status = (await api(key, 'GET', `/channels/alpha-web/connections/${enc(phone)}/status`)).json
    expect(status).toMatchObject({ status: 'disconnected', reason: 'passkey_required', has_qr: false, message: expect.stringContaining('passkey') })
    await hook.expectExactly(['account.disconnected'])
  })

  it('logs the device out through the relay on DELETE, with one account.disconnected (removed)', async () => {
    const { key, hook } = await tenantWithHook()
    const { phone } = await connectAndLink(key)
    expect((await hook.next()).event).toBe('account.connected')
    expect((await api(key, 'DELETE', `/channels/alpha-web/connections/${enc(phone)}`)).json).toMatchObject({ status: 'removed' })
    expect((await hook.next()).payload).toEqual(accountEvent('account.disconnected', phone, 'disconnected', 'removed'))
    await eventually(async () => (await simGet(suite.sim, `/alpha/${enc(phone)}`)).linked === false, 10_000, 'unlinked upstream')
    // The upstream logout the relay reports afterwards belongs to a removed account: no second event.
    await hook.expectExactly(['account.connected', 'account.disconnected'])
  })

  it('gives a tenant-scoped relay only its own tenant’s account', async () => {
    const own = await suite.server.newTenant()
    const other = await suite.server.newTenant()
    const scoped = await issueRelayToken(suite.server, own.tenantId)
    const ownRelay = suite.relay(scoped.token)
    await ownRelay.linked
    const mine = await connectAndLink(own.key)
    const theirs = await connectAndLink(other.key)
    const list = (await (await fetch(`${suite.server.url}/admin/relays`, { headers: { Authorization: `Bearer ${suite.server.adminToken}` } })).json()) as {
      relays: Json[]
    }
    const scopedView = list.relays.find((r) => r.id === scoped.id)!
    const held = scopedView.links.flatMap((l: Json) => l.sessions.map((s: Json) => s.account_id))
    expect(held).toEqual([mine.phone])
    const elsewhere = list.relays.filter((r) => r.id !== scoped.id).flatMap((r) => r.links.flatMap((l: Json) => l.sessions.map((s: Json) => s.account_id)))
    expect(elsewhere).toContain(theirs.phone)
    expect(elsewhere).not.toContain(mine.phone)
  })

  it('refuses a wrong token, and stops a relay whose token is revoked', async () => {
    const wrong = suite.relay(`rly_${'x'.repeat(40)}`)
    expect(await new Promise((r) => wrong.proc.once('exit', r))).toBe(78)
    expect(wrong.output()).toContain('refused the relay token')

    const { id, token } = await issueRelayToken(suite.server)
    const doomed = suite.relay(token)
    await doomed.linked
    const exited = new Promise((r) => doomed.proc.once('exit', r))
    const res = await fetch(`${suite.server.url}/admin/relays/${id}`, { method: 'DELETE', headers: { Authorization: `Bearer ${suite.server.adminToken}` } })
    expect(await res.json()).toMatchObject({ links_closed: 1 })
    expect(await exited).toBe(78)
    const again = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${suite.server.url.replace('http', 'ws')}/relay/connect`, { headers: { Authorization: `Bearer ${token}` } })
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0))
      ws.on('open', () => (ws.close(), resolve(101)))
      ws.on('error', () => undefined)
    })
    expect(again).toBe(401)
  })
})
