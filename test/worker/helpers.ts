/** Shared helpers for the workerd tests: calling the Worker, issuing tenants, and talking to the local receiver. */
import { exports } from 'cloudflare:workers'
import { inject } from 'vitest'
import type { z } from 'zod'
import type { CustomInboundBody } from '../../schema/api/custom-channel'
import type { Behaviour, Received } from '../fixtures/receiver-types'

export const ADMIN_TOKEN = 'test-admin-token-for-the-workerd-suite'
export const ORIGIN = 'https://gateway.test'

export type KeyPlace = 'bearer' | 'header' | 'query'

/** Calls the Worker in-process, as a client would over HTTP. */
export function call(path: string, init: RequestInit & { key?: string; keyPlace?: KeyPlace; json?: unknown } = {}): Promise<Response> {
  const { key, keyPlace = 'bearer', json, ...rest } = init
  const headers = new Headers(rest.headers)
  let url = ORIGIN + path
  if (key && keyPlace === 'bearer') headers.set('Authorization', `Bearer ${key}`)
  if (key && keyPlace === 'header') headers.set('X-API-Key', key)
  if (key && keyPlace === 'query') url += `${url.includes('?') ? '&' : '?'}apiKey=${encodeURIComponent(key)}`
  if (json !== undefined) headers.set('Content-Type', 'application/json')
  return exports.default.fetch(new Request(url, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body }))
}

export async function body<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T
}

export type TestTenant = { tenantId: string; key: string; keyId: string }

/** A fresh tenant with one API key, through the admin API. */
export async function newTenant(): Promise<TestTenant> {
  const t = await body<{ id: string }>(await call('/admin/tenants', { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` }, json: {} }))
  const k = await body<{ id: string; key: string }>(
    await call(`/admin/tenants/${t.id}/keys`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })
  )
  return { tenantId: t.id, key: k.key, keyId: k.id }
}

export function admin(path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
  return call(path, { ...init, headers: { ...(init.headers ?? {}), Authorization: `Bearer ${ADMIN_TOKEN}` } })
}

let channelSeq = 0

/** One receiver channel (its own log and behaviour) on the shared local receiver. */
export function receiverChannel(label = 'ch') {
  const base = inject('receiverUrl')
  const name = `${label}-${Date.now().toString(36)}-${channelSeq++}`
  return {
    name,
    url: `${base}/r/${name}`,
    async behave(b: Behaviour): Promise<void> {
      await fetch(`${base}/__behaviour/${name}`, { method: 'PUT', body: JSON.stringify(b) })
    },
    async log(): Promise<Received[]> {
      return (await fetch(`${base}/__log/${name}`)).json()
    },
    /** Waits (event-driven, on the receiver) until `count` requests arrived or `timeoutMs` passed. */
    async waitFor(count: number, timeoutMs = 5000): Promise<Received[]> {
      return (await fetch(`${base}/__wait/${name}?count=${count}&timeout_ms=${timeoutMs}`)).json()
    },
  }
}

/** Connects the tenant's custom channel to a fresh receiver channel. */
export async function connectCustom(t: TestTenant, label = 'custom') {
  const ch = receiverChannel(label)
  const res = await call('/v1/channels/custom', { method: 'PUT', key: t.key, json: { webhook_url: ch.url } })
  if (res.status !== 200) throw new Error(`connect custom failed: ${res.status} ${await res.text()}`)
  return ch
}

/** A custom-channel push's `customData`, as the request schema takes it. */
export type InboundData = z.input<typeof CustomInboundBody>['customData']

export async function pushInbound(t: TestTenant, data: InboundData) {
  const res = await call('/v1/channels/custom/inbound', { method: 'POST', key: t.key, json: { customData: data } })
  return { status: res.status, body: await body(res) }
}

export async function send(t: TestTenant, json: unknown) {
  const res = await call('/v1/messages', { method: 'POST', key: t.key, json })
  return { status: res.status, body: await body(res), headers: res.headers }
}

/** Headers with the admin token, for calls that are not JSON bodies. */
export const ADMIN_HEADERS = { Authorization: `Bearer ${ADMIN_TOKEN}` }

/** Reads a message through the API. */
export async function getMessageVia(t: TestTenant, id: string) {
  const res = await call(`/v1/messages/${id}`, { key: t.key })
  return { status: res.status, body: await body<WireMessageBody>(res) }
}

export type WireMessageBody = {
  id: string
  account_id: string | null
  direction: 'inbound' | 'outbound'
  text: string
  media: { url: string; content_type: string | null } | null
  status: string
  error: { code: number | null; message: string | null } | null
  timestamp: string
  contact: { id: string; phone: string | null; name: string | null; external_id: string | null }
}

/**
 * Polls a message until it leaves `queued` (bounded by attempts, not by Date.now(), which tests may freeze).
 * Delivery runs in the Durable Object after the 202, so there is nothing to subscribe to.
 */
export async function settled(t: TestTenant, id: string, attempts = 500): Promise<WireMessageBody> {
  for (let i = 0; ; i++) {
    const { body: m } = await getMessageVia(t, id)
    if (m.status !== 'queued' || i >= attempts) return m
    await new Promise((r) => setTimeout(r, 10))
  }
}

let addressSeq = 0
/** A client address no other test uses (CF-Connecting-IP), for limits counted per address. */
export function uniqueAddress(): string {
  return `2001:db8:${crypto.randomUUID().slice(0, 4)}::${(++addressSeq).toString(16)}`
}

/** A signed token with one hex digit of its signature changed (a fixed "00" suffix is the token itself once in 256). */
export function alteredToken(token: string): string {
  return `${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}`
}
