/**
 * The alpha channel end to end: the real local server (wrangler dev), a real relay process in sim mode over real
 * WebSockets, and the simulated network playing the phone. Connect → QR → link → connected; inbound → wait;
 * reply → the contact's outbox; receipts; logout and ban; pairing code; passkey; tenant scope; token refusal.
 * Webhook delivery itself is the webhooks module's; here the events it would deliver are read from D1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import type { SimServer } from '../../relay/sim/network/server'
import { startLocalServer, type LocalServer } from './local-server'
import { eventsOf, eventually, issueRelayToken, simGet, simPost, spawnRelay, startSim, type RelayProc } from './relay-harness'

let server: LocalServer
let sim: SimServer
let relay: RelayProc
const extra: RelayProc[] = []

beforeAll(async () => {
  ;[server, sim] = await Promise.all([startLocalServer(), startSim()])
  relay = spawnRelay(server, (await issueRelayToken(server)).token, sim)
  await relay.linked
})
afterAll(async () => {
  await Promise.all([relay, ...extra].map((r) => r?.kill('SIGKILL')))
  await Promise.all([sim?.close(), server?.stop()])
})

type Json = Record<string, any>

async function api(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${server.url}/v1${path}`, { method, headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: res.status, json: (await res.json()) as Json }
}

let phoneSeq = 0
const newPhone = () => `+1555${String(process.pid % 1000).padStart(3, '0')}${String(Date.now() % 10000).padStart(4, '0')}${phoneSeq++ % 10}`
const enc = encodeURIComponent

async function connectAndLink(key: string, phone = newPhone()) {
  const started = await api(key, 'POST', '/channels/alpha-web/connections', { phone_number: phone })
  expect(started.status).toBe(200)
  const qr = await eventually(async () => {
    const r = await api(key, 'GET', `/channels/alpha-web/connections/${enc(phone)}/qr`)
    return r.json.qr_code ? r.json : undefined
  }, 10_000, 'a QR code')
  expect((await simPost(sim, `/alpha/${enc(phone)}/link`)).json).toMatchObject({ linked: true })
  await eventually(async () => (await api(key, 'GET', `/channels/alpha-web/connections/${enc(phone)}/status`)).json.status === 'connected', 10_000, 'connected')
  return { phone, started: started.json, qr }
}

describe('alpha through a relay in sim mode', () => {
  it('connects: QR from the relay, link on the phone, then connected with account.connected', async () => {
    const { tenantId, key } = await server.newTenant()
    const { phone, started, qr } = await connectAndLink(key)
    expect(started).toMatchObject({ status: 'qr_pending', connect_url: expect.stringContaining('/connect/alpha-web?token=') })
    expect(qr.qr_data_url).toMatch(/^data:image\/png;base64,/)
    const status = (await api(key, 'GET', `/channels/alpha-web/connections/${enc(phone)}/status`)).json
    expect(status).toMatchObject({ status: 'connected', account_status: 'connected', live: true })
    const accounts = (await api(key, 'GET', '/accounts')).json.accounts
    expect(accounts).toEqual([expect.objectContaining({ id: phone, status: 'connected', limits: expect.objectContaining({ ramp_day: 1 }) })])
    expect(eventsOf(server, tenantId).map((e) => e.type)).toEqual(['account.connected'])
  })

  it('brings a contact’s message to a wait, takes the reply to their phone, and moves it on receipts', async () => {
    const { tenantId, key } = await server.newTenant()
    const { phone } = await connectAndLink(key)
    const cursor = (await api(key, 'GET', '/messages/wait?timeout_s=0')).json.cursor
    const waiting = api(key, 'GET', `/messages/wait?timeout_s=20&cursor=${cursor}`)
    await simPost(sim, `/alpha/${enc(phone)}/inbound`, { from: '+447700900111', text: 'Are you open today?', name: 'Ada' })
    const got = (await waiting).json.messages
    expect(got).toEqual([expect.objectContaining({ direction: 'inbound', status: 'received', text: 'Are you open today?', contact: expect.objectContaining({ phone: '+447700900111', name: 'Ada' }) })])

    const reply = await api(key, 'POST', '/messages', { to: { contact_id: got[0].contact.id }, text: 'Yes, until 6pm.' })
    expect(reply.status).toBe(202)
    const id = reply.json.message_id
    await eventually(async () => (await api(key, 'GET', `/messages/${id}`)).json.status === 'sent', 10_000, 'sent')
    const outbox = (await simGet<{ messages: Json[] }>(sim, `/alpha/${enc(phone)}/outbox`)).messages
    expect(outbox).toEqual([expect.objectContaining({ message_id: id, to: '+447700900111', text: 'Yes, until 6pm.', media_url: null, id: expect.stringMatching(/^3EB0/) })])

    await simPost(sim, `/alpha/${enc(phone)}/receipt`, { message_id: id, status: 'delivered' })
    await eventually(async () => (await api(key, 'GET', `/messages/${id}`)).json.status === 'delivered', 10_000, 'delivered')
    await simPost(sim, `/alpha/${enc(phone)}/receipt`, { message_id: outbox[0]!.id, status: 'read' })
    await eventually(async () => (await api(key, 'GET', `/messages/${id}`)).json.status === 'read', 10_000, 'read')
    expect(eventsOf(server, tenantId).map((e) => e.type)).toEqual(['account.connected', 'message.received', 'message.sent', 'message.delivered', 'message.read'])
  })

  it('reports a logout from the phone as disconnected (logged_out) and a ban as restricted (blocked_by_alpha)', async () => {
    const a = await server.newTenant()
    const { phone } = await connectAndLink(a.key)
    await simPost(sim, `/alpha/${enc(phone)}/logout`)
    await eventually(async () => (await api(a.key, 'GET', '/accounts')).json.accounts[0]?.status === 'disconnected', 10_000, 'disconnected')
    expect((await api(a.key, 'GET', `/channels/alpha-web/connections/${enc(phone)}/status`)).json).toMatchObject({ status: 'disconnected', reason: 'logged_out' })
    expect(eventsOf(server, a.tenantId).at(-1)).toMatchObject({ type: 'account.disconnected', payload: { account: { reason: 'logged_out' } } })

    const b = await server.newTenant()
    const banned = await connectAndLink(b.key)
    await simPost(sim, `/alpha/${enc(banned.phone)}/ban`)
    await eventually(async () => (await api(b.key, 'GET', '/accounts')).json.accounts[0]?.status === 'restricted', 10_000, 'restricted')
    expect(eventsOf(server, b.tenantId).at(-1)).toMatchObject({ type: 'account.restricted', payload: { account: { reason: 'blocked_by_alpha' } } })
  })

  it('links with a pairing code answered by the connect call', async () => {
    const { key } = await server.newTenant()
    const phone = newPhone()
    const r = await api(key, 'POST', '/channels/alpha-web/connections', { phone_number: phone, link_method: 'pairing_code' })
    expect(r.json.pairing_code).toMatch(/^[1-9A-HJ-NP-Z]{8}$/)
    expect((await simGet(sim, `/alpha/${enc(phone)}`)).pairing_code).toBe(r.json.pairing_code)
    await simPost(sim, `/alpha/${enc(phone)}/link`)
    await eventually(async () => (await api(key, 'GET', `/channels/alpha-web/connections/${enc(phone)}/status`)).json.status === 'connected', 10_000, 'connected')
  })

  it('says a passkey is required instead of cycling QR codes', async () => {
    const { key } = await server.newTenant()
    const phone = newPhone()
    await api(key, 'POST', '/channels/alpha-web/connections', { phone_number: phone })
    await eventually(async () => (await api(key, 'GET', `/channels/alpha-web/connections/${enc(phone)}/qr`)).json.qr_code, 10_000, 'a QR code')
    await simPost(sim, `/alpha/${enc(phone)}/link`, { passkey: true })
    const status = await eventually(async () => {
      const s = (await api(key, 'GET', `/channels/alpha-web/connections/${enc(phone)}/status`)).json
      return s.status === 'disconnected' ? s : undefined
    }, 10_000, 'disconnected')
    expect(status).toMatchObject({ reason: 'passkey_required', has_qr: false, message: expect.stringContaining('passkey') })
  })

  it('logs the device out through the relay on DELETE', async () => {
    const { key } = await server.newTenant()
    const { phone } = await connectAndLink(key)
    expect((await api(key, 'DELETE', `/channels/alpha-web/connections/${enc(phone)}`)).json).toMatchObject({ status: 'removed' })
    await eventually(async () => (await simGet(sim, `/alpha/${enc(phone)}`)).linked === false, 10_000, 'unlinked upstream')
  })

  it('gives a tenant-scoped relay only its own tenant’s account', async () => {
    const own = await server.newTenant()
    const other = await server.newTenant()
    const scoped = await issueRelayToken(server, own.tenantId)
    const ownRelay = spawnRelay(server, scoped.token, sim)
    extra.push(ownRelay)
    await ownRelay.linked
    const mine = await connectAndLink(own.key)
    const theirs = await connectAndLink(other.key)
    const list = (await (await fetch(`${server.url}/admin/relays`, { headers: { Authorization: `Bearer ${server.adminToken}` } })).json()) as { relays: Json[] }
    const scopedView = list.relays.find((r) => r.id === scoped.id)!
    const held = scopedView.links.flatMap((l: Json) => l.sessions.map((s: Json) => s.account_id))
    expect(held).toEqual([mine.phone])
    const elsewhere = list.relays.filter((r) => r.id !== scoped.id).flatMap((r) => r.links.flatMap((l: Json) => l.sessions.map((s: Json) => s.account_id)))
    expect(elsewhere).toContain(theirs.phone)
    expect(elsewhere).not.toContain(mine.phone)
  })

  it('refuses a wrong token, and stops a relay whose token is revoked', async () => {
    const wrong = spawnRelay(server, `rly_${'x'.repeat(40)}`, sim)
    expect(await new Promise((r) => wrong.proc.once('exit', r))).toBe(78)
    expect(wrong.output()).toContain('refused the relay token')

    const { id, token } = await issueRelayToken(server)
    const doomed = spawnRelay(server, token, sim)
    extra.push(doomed)
    await doomed.linked
    const exited = new Promise((r) => doomed.proc.once('exit', r))
    const res = await fetch(`${server.url}/admin/relays/${id}`, { method: 'DELETE', headers: { Authorization: `Bearer ${server.adminToken}` } })
    expect(await res.json()).toMatchObject({ links_closed: 1 })
    expect(await exited).toBe(78)
    const again = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${server.url.replace('http', 'ws')}/relay/connect`, { headers: { Authorization: `Bearer ${token}` } })
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0))
      ws.on('open', () => (ws.close(), resolve(101)))
      ws.on('error', () => undefined)
    })
    expect(again).toBe(401)
  })
})
