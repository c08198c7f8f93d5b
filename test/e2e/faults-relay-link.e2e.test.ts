/**
 * The relay link dropped between a frame and its answer (issue 14 §6), with a real relay process, the real local
 * server and a WebSocket proxy between them that cuts the link at the chosen frame: an inbound message the edge
 * stored but whose ack was lost is sent again and stored once; a send the relay made upstream whose `sent` report
 * was lost is not made twice when the edge hands the still-queued message to the relay again.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { SimServer } from '../../relay/sim/network/server'
import { startLinkProxy, type LinkProxy } from '../fixtures/link-proxy'
import { startLocalServer, type LocalServer } from './local-server'
import { eventually, issueRelayToken, simGet, simPost, spawnRelay, startSim, type RelayProc } from './relay-harness'

type Json = Record<string, any>
const enc = encodeURIComponent

let server: LocalServer
let sim: SimServer
let proxy: LinkProxy
let relay: RelayProc | undefined
const cleanup: Array<() => Promise<unknown>> = []

beforeAll(async () => {
  ;[server, sim] = await Promise.all([startLocalServer(), startSim()])
})
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c()
  await relay?.kill('SIGKILL')
  await proxy?.close()
})
afterAll(async () => {
  await Promise.all([sim?.close(), server?.stop()])
})

let phoneSeq = 0
const newPhone = () => `+1557${String(Date.now() % 1_000_000).padStart(6, '0')}${phoneSeq++ % 10}`

/** A relay linked through a fresh proxy, and an account linked on it through the simulated network. */
async function linkedThroughProxy(): Promise<{ key: string; phone: string }> {
  proxy = await startLinkProxy(server.url)
  const { token } = await issueRelayToken(server)
  relay = spawnRelay(server, token, sim, { GATEWAY_URL: proxy.url })
  await relay.linked
  const { key } = await server.newTenant()
  const phone = newPhone()
  expect((await server.api(key, 'POST', '/channels/alpha-web/connections', { phone_number: phone })).status).toBe(200)
  await eventually(async () => (await server.api<Json>(key, 'GET', `/channels/alpha-web/connections/${enc(phone)}/qr`)).json.qr_code, 10_000, 'a QR code')
  await simPost(sim, `/alpha/${enc(phone)}/link`)
  await eventually(async () => (await server.api<Json>(key, 'GET', '/accounts')).json.accounts[0]?.status === 'connected', 10_000, 'connected')
  cleanup.push(() => server.api(key, 'DELETE', `/channels/alpha-web/connections/${enc(phone)}`))
  return { key, phone }
}

async function inbound(key: string): Promise<Json[]> {
  return (await server.api<Json>(key, 'GET', '/messages?direction=inbound&limit=100')).json.messages
}

describe('relay link dropped between a frame and its answer', () => {
  it('stores an inbound message once when the edge’s ack was lost and the relay sent it again', async () => {
    const { key, phone } = await linkedThroughProxy()
    const inboundIds = () => new Set(proxy.frames.filter((s) => s.direction === 'to-edge' && s.frame.type === 'inbound').map((s) => s.frame.id))
    const cut = proxy.cutWhen(
      (s) => s.direction === 'to-relay' && s.frame.type === 'ack' && Array.isArray(s.frame.ids) && s.frame.ids.some((id) => inboundIds().has(id))
    )
    const linksBefore = proxy.links()
    expect((await simPost(sim, `/alpha/${enc(phone)}/inbound`, { from: '+447700900555', text: 'ack lost' })).status).toBe(200)
    await cut
    // The relay reconnects through the proxy, sends the unacked frame again, and this time the ack arrives.
    await eventually(() => proxy.links() > linksBefore && proxy.frames.some((s) => s.direction === 'to-relay' && s.frame.type === 'ack'), 15_000, 'a new link')
    const sentTwice = await eventually(
      () => {
        const frames = proxy.frames.filter((s) => s.direction === 'to-edge' && s.frame.type === 'inbound')
        return frames.length >= 2 ? frames : undefined
      },
      15_000,
      'the inbound frame sent again'
    )
    expect(new Set(sentTwice.map((s) => JSON.stringify(s.frame.message))).size).toBe(1)
    await eventually(async () => (await simGet<Json>(sim, `/alpha/${enc(phone)}`)).pending_inbound === 0, 15_000, 'the upstream acknowledged')
    const stored = await inbound(key)
    expect(stored.map((m) => m.text)).toEqual(['ack lost'])
  })

  it('does not send twice upstream when the relay’s `sent` report was lost and the edge offers the send again', async () => {
    const { key, phone } = await linkedThroughProxy()
    await simPost(sim, `/alpha/${enc(phone)}/inbound`, { from: '+447700900556', text: 'hi' })
    const contact = await eventually(async () => (await inbound(key))[0]?.contact, 10_000, 'the inbound message')
    const cut = proxy.cutWhen((s) => s.direction === 'to-edge' && s.frame.type === 'sent')
    const linksBefore = proxy.links()
    const r = await server.api<Json>(key, 'POST', '/messages', { to: { contact_id: contact.id }, text: 'exactly once' })
    expect(r.status).toBe(202)
    await cut
    // The edge never heard `sent`: on the relay's return it offers the queued message again, and the relay reports it.
    await eventually(async () => (await server.api<Json>(key, 'GET', `/messages/${r.json.message_id}`)).json.status === 'sent', 20_000, 'sent')
    expect(proxy.links()).toBeGreaterThan(linksBefore)
    // Offered twice (before the cut and after the relay came back), made once.
    expect(proxy.frames.filter((s) => s.direction === 'to-relay' && s.frame.type === 'send').length).toBeGreaterThanOrEqual(2)
    // Handed upstream once by the relay (its log line per upstream send), and received once by the contact.
    const handed = relay!
      .output()
      .split('\n')
      .filter((l) => l.includes('message handed upstream') && l.includes(String(r.json.message_id)))
    expect(handed).toHaveLength(1)
    const outbox = (await simGet<{ messages: Json[] }>(sim, `/alpha/${enc(phone)}/outbox`)).messages
    expect(outbox.map((m) => m.text)).toEqual(['exactly once'])
  })
})
