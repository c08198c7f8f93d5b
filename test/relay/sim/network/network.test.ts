/** The simulated network over its real WebSocket and control API, driven by a bare device client. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { ServerMsg, SIM_CLOSE, type ClientMsg } from '../../../../relay/sim/network/protocol'
import { startSimNetwork, type SimServer } from '../../../../relay/sim/network/server'
import { simControl } from '../sim-control'

let sim: SimServer
beforeEach(async () => {
  sim = await startSimNetwork({ timing: { firstQrMs: 150, nextQrMs: 80, qrRefs: 3 } })
})
afterEach(() => sim.close())

type Device = {
  got: ServerMsg[]
  closed: Promise<number>
  send(m: ClientMsg): void
  next<T extends ServerMsg['t']>(t: T): Promise<Extract<ServerMsg, { t: T }>>
}

async function device(login: ClientMsg): Promise<Device> {
  const ws = new WebSocket(`${sim.url.replace('http', 'ws')}/sim/ws`)
  const got: ServerMsg[] = []
  const waiters = new Set<() => void>()
  ws.on('message', (d) => {
    got.push(ServerMsg.parse(JSON.parse(String(d))))
    for (const w of [...waiters]) w()
  })
  const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)))
  await new Promise((r) => ws.on('open', r))
  ws.send(JSON.stringify(login))
  return {
    got,
    closed,
    send: (m) => ws.send(JSON.stringify(m)),
    next: (t) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const i = got.findIndex((m) => m.t === t)
          if (i >= 0) waiters.delete(check), clearTimeout(timer), resolve(got.splice(i, 1)[0] as never)
        }
        const timer = setTimeout(() => (waiters.delete(check), reject(new Error(`no ${t}`))), 3000)
        waiters.add(check)
        check()
      }),
  }
}

const control = (method: string, path: string, body?: unknown) => simControl(sim, method, path, body)

const PHONE = '+15557770001'
const P = encodeURIComponent(PHONE)

async function linkedDevice() {
  const d = await device({ t: 'login', phone: PHONE, device: null })
  await d.next('qr')
  await control('POST', `/alpha/${P}/link`)
  const paired = await d.next('paired')
  expect(await d.closed).toBe(SIM_CLOSE.RESTART_REQUIRED)
  const again = await device({ t: 'login', phone: PHONE, device: paired.device })
  await again.next('open')
  return { d: again, creds: paired.device }
}

describe('simulated network', () => {
  it('rotates QR refs and ends the link window when they run out', async () => {
    const d = await device({ t: 'login', phone: PHONE, device: null })
    const refs = [await d.next('qr'), await d.next('qr'), await d.next('qr')]
    expect(new Set(refs.map((r) => r.ref)).size).toBe(3)
    expect(await d.closed).toBe(SIM_CLOSE.LINK_WINDOW_OVER)
  })

  it('gives one pairing code per link attempt, however often it is asked', async () => {
    const d = await device({ t: 'login', phone: PHONE, device: null })
    await d.next('qr')
    d.send({ t: 'pairing_code' })
    d.send({ t: 'pairing_code' })
    const [a, b] = [await d.next('pairing_code'), await d.next('pairing_code')]
    expect(a.code).toMatch(/^[1-9A-HJ-NP-Z]{8}$/)
    expect(b.code).toBe(a.code)
  })

  it('pairs on the control API link, restarts, and opens with the new credentials', async () => {
    const { creds } = await linkedDevice()
    expect(creds.id).toMatch(/^dev_/)
    expect((await control('GET', `/alpha/${P}`)).json).toMatchObject({ linked: true, open_connections: 1, max_concurrent_connections: 1 })
  })

  it('refuses linking when no QR or code is pending, and stalls on a passkey demand', async () => {
    expect((await control('POST', '/alpha/%2B15557770009/link')).status).toBe(404)
    const d = await device({ t: 'login', phone: PHONE, device: null })
    await d.next('qr')
    const r = await control('POST', `/alpha/${P}/link`, { passkey: true })
    expect(r.json).toEqual({ linked: false, passkey_required: true })
    await d.next('passkey_required')
    expect((await control('GET', `/alpha/${P}`)).json).toMatchObject({ linked: false })
  })

  it('keeps inbound messages until the device acks them and sends them again on the next login', async () => {
    const { d, creds } = await linkedDevice()
    const { json } = await control('POST', `/alpha/${P}/inbound`, { from: '+447700900001', text: 'hello', name: 'Ada' })
    const live = await d.next('message')
    expect(live).toMatchObject({ id: json.id, text: 'hello', from: { phone: '+447700900001', name: 'Ada' }, offline: false })
    const again = await device({ t: 'login', phone: PHONE, device: creds })
    await again.next('open')
    expect(await again.next('message')).toMatchObject({ id: json.id, offline: true })
    again.send({ t: 'ack', ids: [String(json.id)] })
    await new Promise((r) => setTimeout(r, 30))
    expect((await control('GET', `/alpha/${P}`)).json).toMatchObject({ pending_inbound: 0 })
  })

  it('replaces an open session when the same credentials log in again', async () => {
    const { d, creds } = await linkedDevice()
    const second = await device({ t: 'login', phone: PHONE, device: creds })
    await second.next('open')
    expect(await d.closed).toBe(SIM_CLOSE.REPLACED)
    expect((await control('GET', `/alpha/${P}`)).json).toMatchObject({ max_concurrent_connections: 2, open_connections: 1 })
  })

  it('keeps one outbox entry per message id and finds it by either id for a receipt', async () => {
    const { d } = await linkedDevice()
    const send: ClientMsg = { t: 'send', id: '3EB0AA', messageId: 'msg_1', to: { phone: '+447700900002', lid: null }, text: 'hi', mediaUrl: null }
    d.send(send)
    d.send(send)
    await d.next('send_ack')
    await d.next('send_ack')
    expect((await control('GET', `/alpha/${P}/outbox`)).json.messages).toEqual([
      { id: '3EB0AA', message_id: 'msg_1', to: '+447700900002', text: 'hi', media_url: null, quoted: null, at: expect.any(Number) },
    ])
    await control('POST', `/alpha/${P}/receipt`, { message_id: 'msg_1', status: 'delivered' })
    expect(await d.next('receipt')).toMatchObject({ id: '3EB0AA', status: 'delivered' })
    expect((await control('POST', `/alpha/${P}/receipt`, { message_id: 'nope', status: 'read' })).status).toBe(404)
  })

  it('closes with the upstream codes on logout (401) and ban (403), and refuses the device afterwards', async () => {
    const first = await linkedDevice()
    await control('POST', `/alpha/${P}/logout`)
    expect(await first.d.closed).toBe(SIM_CLOSE.LOGGED_OUT)
    const stale = await device({ t: 'login', phone: PHONE, device: first.creds })
    expect(await stale.closed).toBe(SIM_CLOSE.LOGGED_OUT)
    const second = await linkedDevice()
    await control('POST', `/alpha/${P}/ban`)
    expect(await second.d.closed).toBe(SIM_CLOSE.BANNED)
  })

  it('validates control bodies', async () => {
    await linkedDevice()
    const r = await control('POST', `/alpha/${P}/inbound`, { from: '12345', text: 'x' })
    expect(r.status).toBe(400)
    expect(String(r.json.error)).toContain('from')
  })
})
