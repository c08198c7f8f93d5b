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

const until = async (cond: () => boolean | Promise<boolean>, timeoutMs = 3000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met')
    await new Promise((r) => setTimeout(r, 5))
  }
}
const last = (r: Run) => r.states.at(-1)?.state
const control = (path: string, body: unknown = {}) =>
  fetch(`${sim.url}/sim${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
const phoneView = async () => (await (await fetch(`${sim.url}/sim/alpha/${P}`)).json()) as Record<string, unknown>

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

  it('acknowledges each message to the network as it arrives, as alpha does, so the network never sends it again', async () => {
    const { r, store } = await linked()
    await control(`/alpha/${P}/inbound`, { from: '+447700900004', text: 'hi', lid: '999' })
    await until(() => r.inbound.length === 1)
    expect(r.inbound[0]).toMatchObject({ text: 'hi', from: { id: '999@lid', lid: '999@lid', phone: '447700900004' } })
    // Not stored at the edge yet, and already gone from the network: from here only the relay has it.
    expect(await phoneView()).toMatchObject({ pending_inbound: 0 })
    r.inbound[0]!.onCommitted?.()
    await r.c.stop()
    const again = run(store)
    await again.c.start()
    await until(() => last(again) === 'connected')
    await new Promise((res) => setTimeout(res, 50))
    expect(again.inbound).toEqual([])
    await again.c.stop()
  })

  it('sends under an upstream id derived from the message id and reports receipts', async () => {
    const { r } = await linked()
    const a = await r.c.send({ messageId: 'msg_x', to: { phone: '+447700900005', peerId: null }, text: 'yo', mediaUrl: null })
    const b = await r.c.send({ messageId: 'msg_x', to: { phone: '+447700900005', peerId: null }, text: 'yo', mediaUrl: null })
    expect(a.upstreamId).toBe(b.upstreamId)
    await control(`/alpha/${P}/receipt`, { message_id: 'msg_x', status: 'read' })
    await until(() => r.receipts.length === 1)
    expect(r.receipts[0]).toMatchObject({ upstreamId: a.upstreamId, status: 'read' })
    r.receipts[0]!.onCommitted?.()
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

describe('sim driver offline backlog', () => {
  const BACKLOG = 20

  /** A linked number whose relay was away while BACKLOG messages came, resumed with the backlog still buffered. */
  async function resumedWithBacklog() {
    const { r, store } = await linked()
    await r.c.stop()
    for (let i = 0; i < BACKLOG; i++) await control(`/alpha/${P}/inbound`, { from: '+447700900004', text: `while away ${i}` })
    // The network takes its time to say the backlog is through, as with a large one.
    sim.network.timing.offlineEndMs = 60_000
    const again = run(store)
    await again.c.start()
    await until(async () => (await phoneView()).pending_inbound === 0)
    expect(again.inbound).toEqual([])
    return { again, store }
  }

  it('holds the backlog until the network says it is through, then hands it over in order', async () => {
    sim.network.timing.offlineEndMs = 200
    const { r, store } = await linked()
    await r.c.stop()
    for (let i = 0; i < 3; i++) await control(`/alpha/${P}/inbound`, { from: '+447700900004', text: `while away ${i}` })
    const again = run(store)
    await again.c.start()
    await until(() => last(again) === 'connected')
    expect(again.inbound).toEqual([])
    await until(() => again.inbound.length === 3)
    expect(again.inbound.map((m) => m.text)).toEqual(['while away 0', 'while away 1', 'while away 2'])
    for (const m of again.inbound) m.onCommitted?.()
    await again.c.stop()
  })

  it('hands a buffered backlog over on stop and returns once the edge stored it', async () => {
    const { again } = await resumedWithBacklog()
    let stopped = false
    const stop = again.c.stop().then(() => (stopped = true))
    await until(() => again.inbound.length === BACKLOG)
    await new Promise((res) => setTimeout(res, 50))
    expect(stopped).toBe(false)
    for (const m of again.inbound) m.onCommitted?.()
    await stop
    expect(again.inbound.map((m) => m.text)).toEqual(Array.from({ length: BACKLOG }, (_, i) => `while away ${i}`))
  })

  it('hands a buffered backlog over when the network drops the connection, and nothing comes twice', async () => {
    const { again } = await resumedWithBacklog()
    sim.network.drop(PHONE)
    await until(() => again.inbound.length === BACKLOG)
    for (const m of again.inbound) m.onCommitted?.()
    await until(() => last(again) === 'connected' && again.states.filter((s) => s.state === 'connected').length === 2, 5_000)
    await new Promise((res) => setTimeout(res, 100))
    expect(again.inbound).toHaveLength(BACKLOG)
    await again.c.stop()
  })
})

describe('sim driver media messages', () => {
  it('keeps a media message with the session until the edge stored it, so a relay killed mid-upload loses nothing', async () => {
    const { r, store } = await linked()
    const media = { content_type: 'image/png', file_name: 'a.png', data_base64: Buffer.from('png bytes').toString('base64'), voice_note: false }
    await control(`/alpha/${P}/inbound`, { from: '+447700900004', text: 'look', media })
    await until(() => r.inbound.length === 1)
    const id = r.inbound[0]!.upstreamId
    expect(store.data.has(`pending/${id}`)).toBe(true)
    expect(await phoneView()).toMatchObject({ pending_inbound: 0 })
    // The process dies here (no commit, no stop); the next relay resumes the session from the store.
    const again = run(store)
    await again.c.start()
    await until(() => again.inbound.length === 1)
    expect(again.inbound[0]).toMatchObject({ upstreamId: id, text: 'look', attachment: { contentType: 'image/png', fileName: 'a.png' } })
    again.inbound[0]!.onCommitted?.()
    await until(() => !store.data.has(`pending/${id}`))
    await again.c.stop()
  })
})
