/** Driving the fake Twilio and the fake SMS gateway from workerd tests, and connecting a tenant's SMS number. */
import { env } from 'cloudflare:workers'
import { expect } from 'vitest'
import { and, asc, eq } from 'drizzle-orm'
import { messages } from '../../../../schema/d1'
import { body, call, type TestTenant } from '../../helpers'
import { db } from '../../state'

/** An MMS item the fake Twilio serves: `fail` lists statuses answered first, one per fetch; `chunked` leaves out Content-Length. */
export type FakeMmsMedia = { content_type: string; data_base64?: string; size?: number; fail?: number[]; chunked?: boolean }

export type Prepared = { url: string; headers: Record<string, string>; body: string }

async function control<T>(base: string, path: string, init: { method?: string; json?: unknown } = {}): Promise<T> {
  const res = await fetch(`${base}/__fake/${path}`, {
    method: init.method ?? (init.json === undefined ? 'GET' : 'POST'),
    headers: { 'Content-Type': 'application/json' },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  })
  if (!res.ok) throw new Error(`fake ${path}: ${res.status} ${await res.text()}`)
  return (await res.json()) as T
}

export const twilio = {
  createAccount: (numbers: { phone_number: string; sms?: boolean; mms?: boolean }[], status?: string) =>
    control<{ account_sid: string; auth_token: string; numbers: { sid: string; phone_number: string }[] }>(env.TWILIO_API_URL, 'accounts', {
      json: { numbers, status },
    }),
  state: (sid: string) =>
    control<{
      numbers: { sid: string; phone_number: string; sms_url: string; sms_method: string }[]
      messages: { sid: string; to: string; from: string; body: string; media: string[]; status_callback: string }[]
    }>(env.TWILIO_API_URL, `accounts/${sid}`),
  addService: (sid: string, phoneNumbers: string[], campaignStatus: string | null) =>
    control<{ sid: string }>(env.TWILIO_API_URL, `accounts/${sid}/services`, { json: { phone_numbers: phoneNumbers, campaign_status: campaignStatus } }),
  setCampaign: (sid: string, mg: string, campaignStatus: string) =>
    control(env.TWILIO_API_URL, `accounts/${sid}/services/${mg}`, { method: 'PUT', json: { campaign_status: campaignStatus } }),
  /** Creates the number's toll-free verification, or moves it to `status` (TWILIO_APPROVED confirms it). */
  setTollfree: (sid: string, phoneNumber: string, status: string) =>
    control(env.TWILIO_API_URL, `accounts/${sid}/tollfree`, { method: 'PUT', json: { phone_number: phoneNumber, status } }),
  optOut: (sid: string, phone: string) => control(env.TWILIO_API_URL, `accounts/${sid}/opt-out`, { json: { phone } }),
  failSends: (sid: string, status: number | null) => control(env.TWILIO_API_URL, `accounts/${sid}/fail-sends`, { method: 'PUT', json: { status } }),
  /** An inbound SMS as Twilio would post it to the number's SmsUrl, signed by the twilio package. */
  inbound: (
    sid: string,
    json: {
      to: string
      from: string
      body: string
      /** A `url` is sent as it is; otherwise the fake serves the bytes (`data_base64`, or `size` generated ones) behind its Basic auth. */
      media?: ({ url: string; content_type: string } | FakeMmsMedia)[]
      message_sid?: string
      opt_out_type?: string
      sign_with?: string
    }
  ) => control<Prepared & { params: Record<string, string>; signature: string }>(env.TWILIO_API_URL, `accounts/${sid}/inbound`, { json }),
  status: (sid: string, messageSid: string, status: string, errorCode?: number) =>
    control<Prepared & { params: Record<string, string> }>(env.TWILIO_API_URL, `accounts/${sid}/messages/${messageSid}/status`, {
      json: { status, error_code: errorCode },
    }),
  /** How often each MMS media item was fetched (at its MediaUrl, with the account's Basic auth). */
  media: (sid: string) => control<{ media: { sid: string; fetches: number }[] }>(env.TWILIO_API_URL, `accounts/${sid}/media`),
  validate: (json: { auth_token: string; signature: string; url: string; params: Record<string, string> }) =>
    control<{ valid: boolean }>(env.TWILIO_API_URL, 'validate', { json }),
}

const gatewayBase = () => env.SMS_GATEWAY_URL.replace(/\/3rdparty\/v1$/, '')

export const gateway = {
  base: gatewayBase,
  createUser: (online = true) => control<{ username: string; password: string; device_id: string }>(gatewayBase(), 'users', { json: { online } }),
  state: (u: string) =>
    control<{
      online: boolean
      webhooks: { id: string; url: string; event: string }[]
      messages: { id: string; phoneNumbers: string[]; text: string; withDeliveryReport: boolean }[]
      send_attempts: { id: string | null; status: number }[]
    }>(gatewayBase(), `users/${u}`),
  setOnline: (u: string, online: boolean, lastSeen?: string) =>
    control(gatewayBase(), `users/${u}/online`, { method: 'PUT', json: { online, last_seen: lastSeen } }),
  setPassword: (u: string, password: string) => control(gatewayBase(), `users/${u}/password`, { method: 'PUT', json: { password } }),
  event: (u: string, json: { event: string; payload: Record<string, unknown>; id?: string; timestamp_offset_s?: number; sign_with?: string }) =>
    control<Prepared>(gatewayBase(), `users/${u}/events`, { json }),
}

/** Posts a prepared provider callback to the Worker in-process (the URL's origin is the test origin). */
export function post(p: Prepared, tweak: { headers?: Record<string, string | null>; body?: string } = {}): Promise<Response> {
  const headers = new Headers()
  for (const [k, v] of Object.entries({ ...p.headers, ...tweak.headers })) if (v !== null) headers.set(k, v)
  const url = new URL(p.url)
  return call(`${url.pathname}${url.search}`, { method: 'POST', headers, body: tweak.body ?? p.body })
}

export async function connectTwilio(t: TestTenant, number = '+447700900123', opts: { mms?: boolean; a2p_registered?: boolean } = {}) {
  const acct = await twilio.createAccount([{ phone_number: number, mms: opts.mms ?? false }])
  const res = await call('/v1/channels/sms/twilio', {
    method: 'POST',
    key: t.key,
    json: {
      account_sid: acct.account_sid,
      auth_token: acct.auth_token,
      phone_number: number,
      ...(opts.a2p_registered === undefined ? {} : { a2p_registered: opts.a2p_registered }),
    },
  })
  const json = await body(res)
  expect(res.status, JSON.stringify(json)).toBe(200)
  return { ...acct, number, json }
}

export async function connectPhone(t: TestTenant, number = '+447700900123') {
  const user = await gateway.createUser()
  const res = await call('/v1/channels/sms/android-gateway', {
    method: 'POST',
    key: t.key,
    json: { username: user.username, password: user.password, phone_number: number },
  })
  const json = await body(res)
  expect(res.status, JSON.stringify(json)).toBe(200)
  return { ...user, number, json }
}

/** Waits (bounded by tries, not time: the clock may be frozen) until a delivery attempt noted a retry. */
export async function retrying(id: string) {
  for (let i = 0; i < 300; i++) {
    const row = await db.select().from(messages).where(eq(messages.id, id)).get()
    if (row?.errorMessage || row?.status !== 'queued') return row
    await new Promise((res) => setTimeout(res, 10))
  }
  return db.select().from(messages).where(eq(messages.id, id)).get()
}

/** The tenant's inbound messages as the API lists them, oldest first. */
export async function inboundMessages<T>(t: TestTenant): Promise<T[]> {
  const list = await body<{ messages: T[] }>(await call('/v1/messages?direction=inbound&limit=50', { key: t.key }))
  return list.messages.reverse()
}

/** Waits (bounded by tries, not time) until the account stored `n` inbound messages: media is stored after the answer. */
export async function arrivedMessages<T>(t: TestTenant, n: number): Promise<T[]> {
  for (let i = 0; i < 500; i++) {
    const list = await inboundMessages<T>(t)
    if (list.length >= n) return list
    await new Promise((r) => setTimeout(r, 10))
  }
  return inboundMessages<T>(t)
}

/** The bytes behind a signed media.url, fetched without an API key. */
export function fetchLink(url: string): Promise<Response> {
  const u = new URL(url)
  return call(`${u.pathname}${u.search}`)
}

/** The tenant's inbound message rows in D1, in the order the account stored them. */
export function inboundRows(tenantId: string) {
  return db
    .select()
    .from(messages)
    .where(and(eq(messages.tenantId, tenantId), eq(messages.direction, 'inbound')))
    .orderBy(asc(messages.seq))
}

/** The signed media.url of each message serves exactly the bytes at the same place in `bytes`. */
export async function expectLinksServe(list: ReadonlyArray<{ media: { url: string } | null }>, bytes: readonly Buffer[]) {
  for (const [i, m] of list.entries()) {
    expect(Buffer.from(await (await fetchLink(m.media!.url)).arrayBuffer()).equals(bytes[i]!)).toBe(true)
  }
}

/** A stored item's signed media.url: its form, and the type and bytes it serves without an API key. */
export async function expectSignedLinkServes(url: string, contentType: string, bytes: Buffer) {
  expect(url).toMatch(/\/media\/med_[0-9a-f]{24}\?tenant=ten_\w+&expires=\d+&signature=[0-9a-f]+$/)
  const res = await fetchLink(url)
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toBe(contentType)
  expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true)
}
