/**
 * Black box against the real local server (wrangler dev) with the fake Twilio and the fake SMS gateway as its
 * providers (TWILIO_API_URL, SMS_GATEWAY_URL): the fakes POST their signed callbacks over real HTTP to the URLs the
 * gateway set up, so the signatures are checked over the real public URL and port.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeSmsGateway, type FakeSmsGateway } from '../fixtures/fake-sms-gateway'
import { startFakeTwilio, type FakeTwilio } from '../fixtures/fake-twilio'
import { startLocalServer, type LocalServer } from './local-server'

let server: LocalServer
let twilio: FakeTwilio
let gateway: FakeSmsGateway

beforeAll(async () => {
  ;[twilio, gateway] = await Promise.all([startFakeTwilio(), startFakeSmsGateway()])
  server = await startLocalServer({ vars: { TWILIO_API_URL: twilio.url, SMS_GATEWAY_URL: `${gateway.url}/3rdparty/v1` } })
})

afterAll(async () => {
  await Promise.all([server?.stop(), twilio?.close(), gateway?.close()])
})

async function fake<T = Record<string, unknown>>(base: string, path: string, json?: unknown, method = json === undefined ? 'GET' : 'POST'): Promise<T> {
  const res = await fetch(`${base}/__fake/${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  })
  expect(res.status, `${path}: ${res.status}`).toBe(200)
  return (await res.json()) as T
}

const NUMBER = '+447700900123'
const PERSON = '+447700900456'

describe('SMS end to end on the local server', () => {
  it('Twilio: signed inbound over HTTP reaches a wait, the reply goes out with a status callback that marks it delivered', async () => {
    const { key } = await server.newTenant()
    const acct = await fake<{ account_sid: string; auth_token: string }>(twilio.url, 'accounts', { numbers: [{ phone_number: NUMBER }] })
    const connected = await server.api(key, 'POST', '/channels/sms/twilio', {
      account_sid: acct.account_sid,
      auth_token: acct.auth_token,
      phone_number: NUMBER,
    })
    expect(connected.status).toBe(200)
    expect(JSON.stringify(connected.json)).not.toContain(acct.auth_token)

    const start = await server.api<{ cursor: string }>(key, 'GET', '/messages/wait?timeout_s=0')
    const waiting = server.api<{ messages: { text: string; contact: { phone: string } }[] }>(
      key,
      'GET',
      `/messages/wait?timeout_s=20&cursor=${start.json.cursor}`
    )
    const inbound = await fake<{ delivered_status: number }>(twilio.url, `accounts/${acct.account_sid}/inbound`, {
      to: NUMBER,
      from: PERSON,
      body: 'Are you open today?',
      deliver: true,
    })
    expect(inbound.delivered_status).toBe(200)
    const got = await waiting
    expect(got.json.messages.map((m) => [m.text, m.contact.phone])).toEqual([['Are you open today?', PERSON]])

    const forged = await fake<{ delivered_status: number }>(twilio.url, `accounts/${acct.account_sid}/inbound`, {
      to: NUMBER,
      from: PERSON,
      body: 'forged',
      sign_with: 'nope',
      deliver: true,
    })
    expect(forged.delivered_status).toBe(403)

    const sent = await server.api<{ message_id: string }>(key, 'POST', '/messages', { to: { phone: PERSON }, text: 'Yes, until 6pm' })
    expect(sent.status).toBe(202)
    let state: { messages: { sid: string; body: string }[] } = { messages: [] }
    for (let i = 0; i < 100 && state.messages.length === 0; i++) {
      state = await fake(twilio.url, `accounts/${acct.account_sid}`)
      if (state.messages.length === 0) await new Promise((r) => setTimeout(r, 50))
    }
    expect(state.messages.map((m) => m.body)).toEqual(['Yes, until 6pm'])
    const callback = await fake<{ delivered_status: number }>(twilio.url, `accounts/${acct.account_sid}/messages/${state.messages[0]!.sid}/status`, {
      status: 'delivered',
      deliver: true,
    })
    expect(callback.delivered_status).toBe(204)
    const message = await server.api<{ status: string }>(key, 'GET', `/messages/${sent.json.message_id}`)
    expect(message.json.status).toBe('delivered')
  })

  it('Android phone: a signed webhook over HTTP is stored, the reply goes to the phone, disconnect deletes the webhooks', async () => {
    const { key } = await server.newTenant()
    const user = await fake<{ username: string; password: string }>(gateway.url, 'users', {})
    const connected = await server.api<{ webhook_url: string }>(key, 'POST', '/channels/sms/android-gateway', {
      username: user.username,
      password: user.password,
      phone_number: NUMBER,
    })
    expect(connected.status).toBe(200)
    expect(connected.json.webhook_url).toMatch(new RegExp(`^${server.url}/v1/channels/sms/android-gateway/[^/]+/447700900123/events$`))

    const hook = await fake<{ delivered_status: number }>(gateway.url, `users/${user.username}/events`, {
      event: 'sms:received',
      payload: { messageId: 'p1', message: 'From the phone side', sender: PERSON },
      deliver: true,
    })
    expect(hook.delivered_status).toBe(204)
    const list = await server.api<{ messages: { text: string }[] }>(key, 'GET', '/messages?direction=inbound')
    expect(list.json.messages.map((m) => m.text)).toEqual(['From the phone side'])

    const sent = await server.api<{ message_id: string }>(key, 'POST', '/messages', { to: { phone: PERSON }, text: 'Got it' })
    let phone: { messages: { id: string }[]; webhooks: unknown[] } = { messages: [], webhooks: [] }
    for (let i = 0; i < 100 && phone.messages.length === 0; i++) {
      phone = await fake(gateway.url, `users/${user.username}`)
      if (phone.messages.length === 0) await new Promise((r) => setTimeout(r, 50))
    }
    expect(phone.messages.map((m) => m.id)).toEqual([sent.json.message_id])

    const removed = await server.api(key, 'DELETE', '/channels/sms')
    expect(removed.json).toMatchObject({ status: 'removed', upstream_cleared: true })
    expect((await fake<{ webhooks: unknown[] }>(gateway.url, `users/${user.username}`)).webhooks).toEqual([])
  })
})
