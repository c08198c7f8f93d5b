/**
 * The RelayHubDO as coordinator: least-loaded placement within tenant scope, fenced leases that let a session move
 * only after its holder's lease lapsed, re-binding a relay that reconnects in time, draining, silent links, and
 * the report when a connected session is left without any relay.
 */
import { runDurableObjectAlarm } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { describe, expect, it, vi } from 'vitest'
import type { SessionRow } from '../../../worker/relay/hub-store'
import { relayHub } from '../../../worker/lib/objects'
import type { LinkAttachment } from '../../../worker/relay/links'
import { pickLink } from '../../../worker/relay/placement'
import { body, call, newTenant, type TestTenant } from '../helpers'
import { closeRelaysAfterEach, FakeRelay, issueRelay, uniquePhone } from '../relay-helpers'

const relays = closeRelaysAfterEach()

const newPhone = () => uniquePhone('1777')

async function open(token: string, opts: Parameters<typeof FakeRelay.open>[1] = {}) {
  const r = await FakeRelay.open(token, opts)
  relays.push(r)
  return r
}

async function connect(t: TestTenant, phone = newPhone()) {
  const res = await call('/v1/channels/alpha-web/connections', { method: 'POST', key: t.key, json: { phone_number: phone } })
  expect(res.status).toBe(200)
  return phone
}

/**
 * Moves the clock on by `ms` and runs the hub's alarm, as its timer would. Relays in `alive` say something first:
 * heartbeats are answered by the runtime on the real clock, so only a frame proves them alive on the moved one.
 */
async function elapse(ms: number, alive: FakeRelay[] = []) {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(Date.now() + ms)
  for (const r of alive) r.send({ type: 'probe_result', id: 'keepalive', sid: 'none', state: null })
  if (alive.length > 0) await new Promise((r) => setTimeout(r, 30))
  await runDurableObjectAlarm(relayHub(env))
}

async function accountOf(t: TestTenant) {
  return (await body<{ accounts: Array<{ status: string; status_reason: string | null }> }>(await call('/v1/accounts', { key: t.key }))).accounts[0]
}

/** A scoped relay with one connected session of its tenant. */
async function connectedSession() {
  const t = await newTenant()
  const { token } = await issueRelay(t.tenantId)
  const relay = await open(token)
  const phone = await connect(t)
  const assign = await relay.next('assign', (a) => a.account.accountId === phone)
  await relay.state(assign, { state: 'connected', identifier: phone, upstreamUserId: null })
  return { t, token, relay, phone, assign }
}

describe('pickLink', () => {
  const link = (instance: string, att: Partial<Omit<LinkAttachment, 'instance'>> = {}) => ({
    ws: new WebSocketPair()[0],
    att: { relayId: 'rly_a', tenantId: null, connectedAt: 1, version: '1', driver: 'sim', channels: ['alpha_web' as const], draining: false, ...att, instance },
  })
  const row: SessionRow = {
    sid: 'ses_1',
    tenantId: 'ten_1',
    accountId: '+15550000001',
    channel: 'alpha_web',
    phone: '+15550000001',
    linkMethod: 'qr',
    forceNew: false,
    importContacts: false,
    relayId: null,
    instance: null,
    fence: 0,
    leaseUntil: null,
    unassignedSince: 1,
    wasConnected: false,
    lostReported: false,
  }

  it('takes the least loaded relay', () => {
    const loads = new Map([
      ['a', 3],
      ['b', 1],
      ['c', 2],
    ])
    expect(pickLink(row, [link('a'), link('b'), link('c')], loads, new Set())?.att.instance).toBe('b')
  })

  it('skips draining relays and relays without the channel', () => {
    const links = [link('a', { draining: true }), link('b', { channels: ['beta'] }), link('c')]
    expect(pickLink(row, links, new Map([['c', 9]]), new Set())?.att.instance).toBe('c')
  })

  it('gives a tenant with relays of its own only to those, and no other tenant to them', () => {
    const links = [link('svc'), link('own', { tenantId: 'ten_1' }), link('else', { tenantId: 'ten_2' })]
    expect(pickLink(row, links, new Map(), new Set(['ten_1']))?.att.instance).toBe('own')
    expect(pickLink(row, [link('svc'), link('else', { tenantId: 'ten_2' })], new Map(), new Set(['ten_1']))).toBeNull()
    expect(pickLink(row, [link('svc'), link('else', { tenantId: 'ten_2' })], new Map(), new Set())?.att.instance).toBe('svc')
  })
})

describe('tenant scope on live links', () => {
  it('never hands a tenant-scoped relay another tenant’s session, nor a service relay the session of a tenant with its own', async () => {
    const [own, other] = [await newTenant(), await newTenant()]
    const scoped = await open((await issueRelay(own.tenantId)).token)
    const service = await open((await issueRelay()).token)
    const mine = await connect(own)
    const theirs = await connect(other)
    await expect(scoped.next('assign', (a) => a.account.accountId === mine)).resolves.toMatchObject({ account: { tenantId: own.tenantId } })
    await expect(service.next('assign', (a) => a.account.accountId === theirs)).resolves.toMatchObject({ account: { tenantId: other.tenantId } })
    await new Promise((r) => setTimeout(r, 100))
    expect(scoped.frames.filter((f) => f.type === 'assign' && f.account.tenantId !== own.tenantId)).toEqual([])
    expect(service.frames.filter((f) => f.type === 'assign' && f.account.tenantId === own.tenantId)).toEqual([])
  })
})

describe('leases', () => {
  it('keep a session with its relay until the lease lapses, then move it under a higher fence', async () => {
    const { token, relay, phone, assign } = await connectedSession()
    const standby = await open(token)
    relay.ws.close(1000, 'gone')
    await new Promise((r) => setTimeout(r, 50))
    await elapse(5_000, [standby])
    expect(standby.frames.some((f) => f.type === 'assign' && f.account.accountId === phone)).toBe(false)
    await elapse(6_000, [standby])
    const moved = await standby.next('assign', (a) => a.account.accountId === phone)
    expect(moved).toMatchObject({ sid: assign.sid, fence: assign.fence + 1, forceNew: false })
    // The old process comes back still listing the session under the old fence: it is told to stop it.
    const late = await open(token, { instance: relay.instance, sessions: [{ sid: assign.sid, fence: assign.fence }] })
    await expect(late.next('revoke', (r) => r.sid === assign.sid)).resolves.toMatchObject({ fence: assign.fence, reason: 'stale' })
  })

  it('re-bind a relay process that reconnects in time and still runs the session', async () => {
    const { t, token, relay, phone, assign } = await connectedSession()
    relay.ws.close(1000, 'blip')
    await new Promise((r) => setTimeout(r, 50))
    const back = await open(token, { instance: relay.instance, sessions: [{ sid: assign.sid, fence: assign.fence }] })
    await elapse(11_000, [back])
    expect(back.frames.filter((f) => f.type === 'assign' || f.type === 'revoke')).toEqual([])
    const ack = await back.request({
      type: 'inbound',
      id: back.id(),
      sid: assign.sid,
      fence: assign.fence,
      message: { upstreamId: 'X1', from: { id: 'p', phone: '+447700900999', lid: null, name: null }, text: 'still here', media: null, sentAt: Date.now() },
    })
    expect(ack).toMatchObject({ type: 'ack' })
    expect((await accountOf(t))?.status).toBe('connected')
    expect(phone).toBeTruthy()
  })

  it('give a link under another token nothing, whatever process id it claims', async () => {
    const { relay, assign } = await connectedSession()
    relay.ws.close(1000, 'blip')
    await new Promise((r) => setTimeout(r, 50))
    const other = await newTenant()
    const { token } = await issueRelay(other.tenantId)
    // Another token claiming the same process id inherits nothing.
    const impostor = await open(token, { instance: relay.instance, sessions: [{ sid: assign.sid, fence: assign.fence }] })
    await expect(impostor.next('revoke', (r) => r.sid === assign.sid)).resolves.toMatchObject({ reason: 'stale' })
  })

  it('cut a silent link with 4008 and move its sessions', async () => {
    const { token, relay, phone } = await connectedSession()
    const standby = await open(token)
    await elapse(11_000, [standby])
    expect((await relay.waitClosed()).code).toBe(4008)
    await expect(standby.next('assign', (a) => a.account.accountId === phone)).resolves.toBeTruthy()
  })

  it('move the sessions of a draining relay at once when it releases them', async () => {
    const { token, relay, phone, assign } = await connectedSession()
    const standby = await open(token)
    relay.send({ type: 'draining' })
    const ack = await relay.request({ type: 'released', id: relay.id(), sid: assign.sid, fence: assign.fence, reason: 'draining' })
    expect(ack).toMatchObject({ type: 'ack' })
    await expect(standby.next('assign', (a) => a.account.accountId === phone)).resolves.toMatchObject({ fence: assign.fence + 1 })
  })

  it('report a connected session left without any relay as disconnected (relay_unavailable), and connected when one returns', async () => {
    const { t, token, relay, phone } = await connectedSession()
    relay.close()
    await new Promise((r) => setTimeout(r, 50))
    await elapse(11_000)
    expect((await accountOf(t))?.status).toBe('connected')
    await elapse(31_000)
    expect(await accountOf(t)).toMatchObject({ status: 'disconnected', status_reason: 'relay_unavailable' })
    const status = await body<Record<string, unknown>>(await call(`/v1/channels/alpha-web/connections/${encodeURIComponent(phone)}/status`, { key: t.key }))
    expect(status).toMatchObject({ status: 'connecting', reason: 'relay_unavailable' })

    vi.useRealTimers()
    const back = await open(token)
    const again = await back.next('assign', (a) => a.account.accountId === phone)
    await back.state(again, { state: 'connected', identifier: phone, upstreamUserId: null })
    expect(await accountOf(t)).toMatchObject({ status: 'connected', status_reason: null })
    const types = await env.DB.prepare('SELECT type FROM events WHERE tenant_id = ? ORDER BY rowid').bind(t.tenantId).all<{ type: string }>()
    expect(types.results.map((r) => r.type)).toEqual(['account.connected', 'account.disconnected', 'account.connected'])
  })
})
