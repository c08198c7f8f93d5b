/** The sim driver against the simulated network, with an in-memory SessionStore, as the relay core would run it. */
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Connector, ImportedContact, InboundMessage, Receipt, SessionState, SessionStore } from '../../../relay/connector'
import { configureSim } from '../../../relay/sim/config'
import { simDriver } from '../../../relay/sim/driver'
import { startSimNetwork, type SimServer } from '../../../relay/sim/network/server'

let sim: SimServer
const PHONE = '+15558880001'
const P = encodeURIComponent(PHONE)

beforeEach(async () => {
  sim = await startSimNetwork({ timing: { firstQrMs: 300, nextQrMs: 150, qrRefs: 2 } })
  configureSim({ url: sim.url })
})
afterEach(() => sim.close())

function memoryStore(): SessionStore & { data: Map<string, string> } {
  const data = new Map<string, string>()
  return {
    data,
    loadAll: async () => new Map(data),
    write: async (changes) => {
      for (const [k, v] of changes) v === null ? data.delete(k) : data.set(k, v)
    },
    clear: async () => data.clear(),
  }
}

type Run = { c: Connector; states: SessionState[]; inbound: InboundMessage[]; receipts: Receipt[]; contacts: ImportedContact[][] }

function run(store: SessionStore, linkMethod: 'qr' | 'pairing_code' = 'qr', forceNew = false): Run {
  const states: SessionState[] = []
  const inbound: InboundMessage[] = []
  const receipts: Receipt[] = []
  const contacts: ImportedContact[][] = []
  const c = simDriver({
    accountId: PHONE,
    phone: PHONE,
    linkMethod,
    forceNew,
    store,
    log: pino({ level: 'silent' }),
    events: { state: (s) => states.push(s), inbound: (m) => inbound.push(m), receipt: (x) => receipts.push(x), contacts: (x) => contacts.push(x) },
  })
  return { c, states, inbound, receipts, contacts }
}

const until = async (cond: () => boolean, timeoutMs = 3000) => {
  const deadline = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met')
    await new Promise((r) => setTimeout(r, 5))
  }
}
const last = (r: Run) => r.states.at(-1)?.state
const control = (path: string, body: unknown = {}) =>
  fetch(`${sim.url}/sim${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

async function linked(store = memoryStore()) {
  const r = run(store)
  await r.c.start()
  await until(() => last(r) === 'qr_pending')
  await control(`/alpha/${P}/link`, { contacts: [{ phone: '+447700900003', name: 'Grace', has_chat: true }] })
  await until(() => last(r) === 'connected')
  return { r, store }
}

describe('sim driver', () => {
  it('shows a QR code, links, stores its credentials and reports connected with the number', async () => {
    const { r, store } = await linked()
    expect(r.states.map((s) => s.state)).toEqual(['qr_pending', 'connecting', 'connecting', 'connected'])
    expect(r.states.at(-1)).toMatchObject({ identifier: PHONE })
    expect(store.data.has('creds')).toBe(true)
    await until(() => r.contacts.length === 1)
    expect(r.contacts[0]).toEqual([{ id: '447700900003@s.sim', phone: '447700900003', lid: null, name: 'Grace', hasChat: true }])
    await r.c.stop()
  })

  it('resumes from the stored credentials with no new QR code', async () => {
    const { r, store } = await linked()
    await r.c.stop()
    const again = run(store)
    await again.c.start()
    await until(() => last(again) === 'connected')
    expect(again.states.some((s) => s.state === 'qr_pending')).toBe(false)
    await again.c.stop()
  })

  it('requests a pairing code once, on the first QR event', async () => {
    const r = run(memoryStore(), 'pairing_code')
    await r.c.start()
    await until(() => last(r) === 'pairing_code')
    await new Promise((res) => setTimeout(res, 350))
    const codes = r.states.filter((s): s is Extract<SessionState, { state: 'pairing_code' }> => s.state === 'pairing_code')
    expect(codes).toHaveLength(1)
    expect(codes[0]!.code).toMatch(/^[1-9A-HJ-NP-Z]{8}$/)
    expect(r.states.some((s) => s.state === 'qr_pending')).toBe(false)
    await r.c.stop()
  })

  it('reports link_expired when the QR refs run out', async () => {
    const r = run(memoryStore())
    await r.c.start()
    await until(() => last(r) === 'disconnected', 2000)
    expect(r.states.at(-1)).toMatchObject({ problem: 'link_expired' })
  })

  it('reports passkey_required once instead of cycling QR codes', async () => {
    const r = run(memoryStore())
    await r.c.start()
    await until(() => last(r) === 'qr_pending')
    await control(`/alpha/${P}/link`, { passkey: true })
    await until(() => last(r) === 'disconnected')
    expect(r.states.at(-1)).toMatchObject({ problem: 'passkey_required' })
    await new Promise((res) => setTimeout(res, 400))
    expect(r.states.filter((s) => s.state === 'qr_pending')).toHaveLength(1)
  })

  it('acks an inbound message upstream only when the relay says the edge committed it', async () => {
    const { r, store } = await linked()
    await control(`/alpha/${P}/inbound`, { from: '+447700900004', text: 'hi', lid: '999' })
    await until(() => r.inbound.length === 1)
    expect(r.inbound[0]).toMatchObject({ text: 'hi', from: { id: '999@lid', lid: '999@lid', phone: '447700900004' } })
    await r.c.stop()
    // Not committed: the network sends it again to the next session.
    const again = run(store)
    await again.c.start()
    await until(() => again.inbound.length === 1)
    again.inbound[0]!.onCommitted?.()
    await again.c.stop()
    const third = run(store)
    await third.c.start()
    await until(() => last(third) === 'connected')
    await new Promise((res) => setTimeout(res, 50))
    expect(third.inbound).toEqual([])
    await third.c.stop()
  })

  it('sends under an upstream id derived from the message id and reports receipts', async () => {
    const { r } = await linked()
    const a = await r.c.send({ messageId: 'msg_x', to: { phone: '+447700900005', peerId: null }, text: 'yo', mediaUrl: null })
    const b = await r.c.send({ messageId: 'msg_x', to: { phone: '+447700900005', peerId: null }, text: 'yo', mediaUrl: null })
    expect(a.upstreamId).toBe(b.upstreamId)
    await control(`/alpha/${P}/receipt`, { message_id: 'msg_x', status: 'read' })
    await until(() => r.receipts.length === 1)
    expect(r.receipts[0]).toMatchObject({ upstreamId: a.upstreamId, status: 'read' })
    await r.c.stop()
  })

  it('wipes the session on logout from the phone, and reports a ban as restricted', async () => {
    const { r, store } = await linked()
    await control(`/alpha/${P}/logout`)
    await until(() => last(r) === 'disconnected')
    expect(r.states.at(-1)).toMatchObject({ problem: 'logged_out' })
    await until(() => store.data.size === 0)
    const second = await linked()
    await control(`/alpha/${P}/ban`)
    await until(() => last(second.r) === 'restricted')
    expect(second.r.states.at(-1)).toMatchObject({ problem: 'blocked_by_alpha' })
    await expect(second.r.c.send({ messageId: 'm', to: { phone: '+447700900006', peerId: null }, text: 'x', mediaUrl: null })).rejects.toThrow()
  })

  it('discards the stored session with forceNew', async () => {
    const { r, store } = await linked()
    await r.c.stop()
    const fresh = run(store, 'qr', true)
    await fresh.c.start()
    await until(() => last(fresh) === 'qr_pending')
    expect(store.data.has('creds')).toBe(false)
    await fresh.c.stop()
  })
})
