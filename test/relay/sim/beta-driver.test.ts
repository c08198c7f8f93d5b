/**
 * The simulator's beta driver: the REAL beta driver (relay/beta) with the REAL GramJS client, over TCP to the
 * simulator's fake data centre, driven through the control API: logins by code, code + password and QR (each starting
 * from a session the data centre minted), then sending and receiving, media, receipts, a flood pause, the stranger
 * flag, logout found by the next call, and a restart that resumes the session.
 */
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Connector, ImportedContact, InboundMessage, LinkMethod, LoginStep, Receipt, SessionState, SessionStore } from '../../../relay/connector'
import { configureSim } from '../../../relay/sim/config'
import { simBetaDriver } from '../../../relay/sim/driver'
import { startSimNetwork, type SimServer } from '../../../relay/sim/network/server'
import { sealedSessionStore } from '../../fixtures/session-store'
import { simControl } from './sim-control'

let sim: SimServer
const PHONE = '+15559990001'
const P = encodeURIComponent(PHONE)
const FRIEND = '+15559990002'
const running: Connector[] = []

beforeEach(async () => {
  sim = await startSimNetwork()
  configureSim({ url: sim.url })
})
afterEach(async () => {
  for (const c of running.splice(0)) await c.stop()
  await sim.close()
})

type Run = { c: Connector; states: SessionState[]; inbound: InboundMessage[]; receipts: Receipt[]; contacts: ImportedContact[][] }

function run(store: SessionStore, linkMethod: LinkMethod = 'code'): Run {
  const seen: Omit<Run, 'c'> = { states: [], inbound: [], receipts: [], contacts: [] }
  const c = simBetaDriver({
    accountId: PHONE,
    phone: PHONE,
    linkMethod,
    forceNew: false,
    store,
    log: pino({ level: 'silent' }),
    events: {
      state: (s) => seen.states.push(s),
      inbound: (m) => seen.inbound.push(m),
      receipt: (x) => seen.receipts.push(x),
      contacts: (x) => seen.contacts.push(x),
    },
  })
  running.push(c)
  return { c, ...seen }
}

const until = async (cond: () => boolean, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met')
    await new Promise((r) => setTimeout(r, 5))
  }
}
const last = (r: Run) => r.states.at(-1)
const control = async (method: string, path: string, body?: unknown) => (await simControl(sim, method, path, body)).json
const code = async () => String((await control('GET', `/beta/${P}/code`)).code)
const login = (r: Run, step: LoginStep) => r.c.login!(step)

async function byCode(store = sealedSessionStore()) {
  const r = run(store)
  await r.c.start()
  expect(last(r)).toMatchObject({ state: 'code_required' })
  expect(await login(r, { kind: 'code', code: await code() })).toMatchObject({ status: 'connected' })
  await until(() => r.contacts.length > 0)
  return { r, store }
}

describe('the beta driver on the simulator', { timeout: 30_000 }, () => {
  it('logs in by code (a wrong code refused first), saves the session, and resumes it after a restart without a login', async () => {
    const store = sealedSessionStore()
    const r = run(store)
    await r.c.start()
    expect(await control('GET', `/beta/${P}`)).toMatchObject({ pending_login: 'code' })
    expect(await login(r, { kind: 'code', code: '00000' })).toMatchObject({ status: 'refused', error: 'code_invalid' })
    const outcome = await login(r, { kind: 'code', code: await code() })
    expect(outcome).toMatchObject({ status: 'connected', userId: (await control('GET', `/beta/${P}`)).user_id })
    expect(last(r)).toMatchObject({ state: 'connected', identifier: PHONE })
    expect(await control('GET', `/beta/${P}`)).toMatchObject({ logged_in_sessions: 1, pending_login: null })
    await r.c.stop()
    const again = run(store)
    await again.c.start()
    await until(() => last(again)?.state === 'connected')
    expect(again.states.map((s) => s.state)).toEqual(['connecting', 'connected'])
    expect(await control('GET', `/beta/${P}`)).toMatchObject({ logged_in_sessions: 1 })
  })

  it('logs in by code then two-step password (SRP), refusing a wrong password first', async () => {
    await control('POST', `/beta/${P}/password`, { password: 'correct horse', hint: 'battery' })
    const r = run(sealedSessionStore())
    await r.c.start()
    expect(await login(r, { kind: 'code', code: await code() })).toMatchObject({ status: 'password_required', hint: 'battery' })
    expect(await login(r, { kind: 'password', password: 'wrong' })).toMatchObject({ status: 'refused', error: 'password_invalid' })
    expect(await login(r, { kind: 'password', password: 'correct horse' })).toMatchObject({ status: 'connected' })
    expect(last(r)).toMatchObject({ state: 'connected' })
  })

  it('logs in by QR accepted on the phone, then the password', async () => {
    await control('POST', `/beta/${P}/password`, { password: 'pw' })
    const r = run(sealedSessionStore(), 'qr')
    await r.c.start()
    expect(last(r)).toMatchObject({ state: 'qr_pending', qr: expect.stringMatching(/^tg:\/\/login\?token=/) })
    expect(await control('GET', `/beta/${P}`)).toMatchObject({ pending_login: 'qr' })
    expect(await control('POST', `/beta/${P}/qr/accept`)).toEqual({ accepted: true })
    await until(() => last(r)?.state === 'password_required')
    expect(await login(r, { kind: 'password', password: 'pw' })).toMatchObject({ status: 'connected' })
  })

  it('reports unknown_number for a number without an account', async () => {
    await control('POST', `/beta/${P}/unregistered`)
    const r = run(sealedSessionStore())
    await r.c.start()
    expect(await login(r, { kind: 'code', code: await code() })).toMatchObject({ status: 'refused', error: 'unknown_number' })
    expect(last(r)).toMatchObject({ state: 'disconnected', problem: 'unknown_number' })
  })

  it('receives text and media, replies by peer id after a restart, sends to a contact by phone, and reports read', async () => {
    await control('POST', `/beta/${P}/contacts`, { contacts: [{ phone: FRIEND, name: 'Fran Friend' }] })
    const { r, store } = await byCode()
    expect(r.contacts[0]).toEqual([expect.objectContaining({ phone: FRIEND, name: 'Fran Friend' })])
    const stranger = '+15559990003'
    const sent = await control('POST', `/beta/${P}/inbound`, { from: stranger, text: 'hello', name: 'Sam', username: 'sam_s', phone_hidden: true })
    await control('POST', `/beta/${P}/inbound`, {
      from: stranger,
      text: '',
      media: { content_type: 'audio/ogg', data_base64: Buffer.from('OggS-voice').toString('base64'), voice_note: true },
    })
    await until(() => r.inbound.length === 2)
    expect(r.inbound[0]).toMatchObject({ upstreamId: sent.message_id, text: 'hello', from: { phone: null, name: 'Sam', username: 'sam_s' } })
    const voice = r.inbound[1]!.attachment!
    expect(voice).toMatchObject({ kind: 'voice_note', contentType: 'audio/ogg' })
    const chunks: Buffer[] = []
    for await (const c of await voice.open()) chunks.push(Buffer.from(c as Buffer))
    expect(Buffer.concat(chunks).toString()).toBe('OggS-voice')

    // A new process knows nothing of Sam but the peer id the edge kept.
    await r.c.stop()
    const again = run(store)
    await again.c.start()
    await until(() => last(again)?.state === 'connected')
    const reply = await again.c.send({ messageId: 'msg_reply', to: { phone: null, peerId: r.inbound[0]!.from.id }, text: 'hi Sam', mediaUrl: null })
    const toFran = await again.c.send({ messageId: 'msg_fran', to: { phone: FRIEND, peerId: null }, text: 'hi Fran', mediaUrl: null })
    await expect(again.c.send({ messageId: 'msg_nobody', to: { phone: '+15559990999', peerId: null }, text: 'x', mediaUrl: null })).rejects.toThrow(
      /beta_requires_existing_contact/
    )
    const outbox = await control('GET', `/beta/${P}/outbox`)
    // The network never sees the gateway's message ids (beta has no field for them).
    expect(outbox.messages).toEqual([
      expect.objectContaining({ id: reply.upstreamId, message_id: null, to: stranger, text: 'hi Sam' }),
      expect.objectContaining({ id: toFran.upstreamId, message_id: null, to: FRIEND, text: 'hi Fran' }),
    ])
    await control('POST', `/beta/${P}/receipt`, { message_id: toFran.upstreamId, status: 'read' })
    await until(() => again.receipts.length === 1)
    expect(again.receipts[0]).toMatchObject({ upstreamId: toFran.upstreamId, status: 'read' })
  })

  it('pauses on a flood wait and sends in order after it, then stops on the stranger flag', async () => {
    await control('POST', `/beta/${P}/contacts`, { contacts: [{ phone: FRIEND }] })
    const { r } = await byCode()
    await control('POST', `/beta/${P}/flood`, { seconds: 1 })
    const to = { phone: FRIEND, peerId: null }
    const sends = ['a', 'b'].map((id) => r.c.send({ messageId: id, to, text: id, mediaUrl: null }))
    await until(() => last(r)?.state === 'slowed')
    await Promise.all(sends)
    expect(((await control('GET', `/beta/${P}/outbox`)).messages as Array<{ text: string }>).map((m) => m.text)).toEqual(['a', 'b'])
    await until(() => last(r)?.state === 'connected')
    await control('POST', `/beta/${P}/stranger`)
    await expect(r.c.send({ messageId: 'c', to, text: 'c', mediaUrl: null })).rejects.toThrow(/PEER_FLOOD|flagged/)
    await until(() => last(r)?.state === 'restricted')
    expect(last(r)).toMatchObject({ problem: 'stranger_flag' })
  })

  it('finds a logout from the app at its next call and wipes the session', async () => {
    await control('POST', `/beta/${P}/contacts`, { contacts: [{ phone: FRIEND }] })
    const { r, store } = await byCode()
    await control('POST', `/beta/${P}/logout`)
    await r.c.send({ messageId: 'x', to: { phone: FRIEND, peerId: null }, text: 'x', mediaUrl: null }).catch(() => undefined)
    await until(() => last(r)?.state === 'disconnected')
    expect(last(r)).toMatchObject({ problem: 'logged_out' })
    expect(store.atRest.size).toBe(0)
  })
})
