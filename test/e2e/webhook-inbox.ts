/**
 * A tenant's webhook subscription to every event, pointed at its own channel of the local receiver, which verifies
 * the signatures itself: e2e tests take the deliveries in arrival order through the receiver's event-driven
 * `/__wait` (no polling, no sleeps), each checked for the headers of spec part 6 and a valid signature, and finally
 * hold the receiver's log against the gateway's own delivery log to show every event arrived exactly once.
 */
import { expect } from 'vitest'
import { EVENT_TYPES, SUBSCRIBABLE_EVENTS, type EventType } from '../../schema/events'
import { WEBHOOK_USER_AGENT } from '../../worker/webhooks/post'
import type { Receiver } from '../fixtures/receiver'
import type { Received } from '../fixtures/receiver-types'
import type { LocalServer } from './local-server'

/** One delivery as the receiver got it: the event name, the parsed body, the raw request. */
export type Delivery = { event: EventType; payload: unknown; request: Received }

export type WebhookInbox = {
  /** The subscription's name (its webhookId) and the receiver channel it posts to. */
  name: string
  /** The next delivery in arrival order, once it has come (fails after `timeoutMs`); signed, verified, well-formed. */
  next(timeoutMs?: number): Promise<Delivery>
  /** The next `count` deliveries in arrival order, once all have come; each checked as by `next`. */
  take(count: number, timeoutMs?: number): Promise<Delivery[]>
  /**
   * Every delivery so far, one per event and in this order, matches `events`: the receiver got nothing else and
   * no delivery twice, and the gateway's delivery log lists exactly these deliveries, each delivered at its first
   * attempt.
   */
  expectExactly(events: EventType[]): Promise<void>
}

/** ISO 8601 UTC with milliseconds, as the gateway writes every `created_at`. */
export const ISO_DATE_TIME = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)

/** Receivers are told to refuse timestamps older than this (spec part 6). */
const SIGNATURE_TOLERANCE_S = 300
const DELIVERY_TIMEOUT_MS = 10_000

const isEventType = (s: unknown): s is EventType => typeof s === 'string' && (SUBSCRIBABLE_EVENTS as readonly string[]).includes(s)

type DeliveryLogRow = { delivery_id: string; event: string; status: string; attempts: number }

/**
 * Subscribes the tenant of `key` to all nine events with a freshly minted signing secret, and gives the receiver
 * channel `name` that secret so it verifies each delivery as a real receiver would.
 */
/** `events`: what the webhook subscribes to; the spec's events by default (the extensions only when a test asks). */
export async function subscribeInbox(
  server: LocalServer,
  receiver: Receiver,
  key: string,
  name: string,
  events: readonly EventType[] = EVENT_TYPES
): Promise<WebhookInbox> {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}/v1${path}`, {
      method,
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: res.status, json: (await res.json()) as Record<string, unknown> }
  }
  const created = await call('POST', '/webhooks', { url: `${receiver.url}/r/${name}`, subscribed_to: [...events], name, generate_signing_secret: true })
  expect(created.status, JSON.stringify(created.json)).toBe(201)
  const secret = created.json.signing_secret
  expect(secret).toMatch(/^whsec_/)
  const behaviour = await fetch(`${receiver.url}/__behaviour/${name}`, { method: 'PUT', body: JSON.stringify({ secret }) })
  expect(behaviour.status).toBe(200)

  /** The gateway's delivery log of this subscription, every page. */
  const deliveryLog = async (): Promise<DeliveryLogRow[]> => {
    const rows: DeliveryLogRow[] = []
    let cursor: string | null = null
    do {
      const r = await call('GET', `/webhooks/${name}/deliveries?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
      expect(r.status, JSON.stringify(r.json)).toBe(200)
      rows.push(...(r.json.deliveries as DeliveryLogRow[]))
      cursor = r.json.next_cursor as string | null
    } while (cursor)
    return rows
  }

  let taken = 0
  const describeLog = () => JSON.stringify(receiver.log(name).map((r) => r.headers['x-webhook-event']))

  const check = (request: Received): Delivery => {
    const h = request.headers
    expect(request.method).toBe('POST')
    expect(request.verified, `signature of ${h['x-webhook-delivery']} verifies with the subscription's secret`).toBe(true)
    expect(h['content-type']).toBe('application/json')
    expect(h['user-agent']).toBe(WEBHOOK_USER_AGENT)
    expect(h['x-webhook-delivery']).toMatch(/^dlv_[0-9A-Za-z]+$/)
    expect(h['x-webhook-attempt']).toBe('1')
    expect(h['x-webhook-test']).toBeUndefined()
    const signedAtS = Number(h['x-webhook-timestamp'])
    expect(Math.abs(Date.now() / 1000 - signedAtS)).toBeLessThan(SIGNATURE_TOLERANCE_S)
    // The delivery's identity is signed inside the body (after the spec's fields): it names this delivery and an
    // event; the tests compare the rest, the spec-6 payload, exactly.
    const { event_id, delivery_id, ...payload } = (request.json ?? {}) as { event?: unknown; created_at?: unknown; event_id?: unknown; delivery_id?: unknown }
    expect(delivery_id, 'the signed body names this delivery').toBe(h['x-webhook-delivery'])
    expect(event_id).toMatch(/^evt_[0-9A-Za-z]+$/)
    const event = payload.event
    if (!isEventType(event)) throw new Error(`delivery without a known event name: ${request.body}`)
    expect(h['x-webhook-event']).toBe(event)
    // The event happened before it was signed, and not long before (one machine, one clock).
    const createdAt = typeof payload.created_at === 'string' ? Date.parse(payload.created_at) : NaN
    expect(createdAt).toBeLessThan((signedAtS + 1) * 1000)
    expect(signedAtS * 1000 - createdAt).toBeLessThan(SIGNATURE_TOLERANCE_S * 1000)
    return { event, payload, request }
  }

  const take = async (count: number, timeoutMs = DELIVERY_TIMEOUT_MS): Promise<Delivery[]> => {
    const want = taken + count
    const res = await fetch(`${receiver.url}/__wait/${name}?count=${want}&timeout_ms=${timeoutMs}`)
    const log = (await res.json()) as Received[]
    if (log.length < want) {
      const seen = log.length > 20 ? `${log.length} deliveries` : describeLog()
      throw new Error(`webhook "${name}": delivery #${want} not received within ${timeoutMs} ms (received so far: ${seen})`)
    }
    const requests = log.slice(taken, want)
    taken = want
    return requests.map(check)
  }

  return {
    name,
    next: async (timeoutMs) => (await take(1, timeoutMs))[0]!,
    take,
    async expectExactly(events) {
      const log = receiver.log(name)
      expect(
        log.map((r) => r.headers['x-webhook-event']),
        'events received, in order'
      ).toEqual(events)
      const ids = log.map((r) => r.headers['x-webhook-delivery'])
      expect(new Set(ids).size, 'no delivery arrived twice').toBe(ids.length)
      // The gateway records an outcome after the receiver answered, so its log may lag the receiver by a moment.
      const deadline = Date.now() + DELIVERY_TIMEOUT_MS
      let rows: DeliveryLogRow[] = []
      for (;;) {
        rows = await deliveryLog()
        if (rows.every((d) => d.status === 'delivered') || Date.now() > deadline) break
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id)
      const logged = rows.map((d) => ({ id: d.delivery_id, event: d.event, status: d.status, attempts: d.attempts })).sort(byId)
      const received = log
        .map((r) => ({ id: r.headers['x-webhook-delivery'] ?? '', event: r.headers['x-webhook-event'], status: 'delivered', attempts: 1 }))
        .sort(byId)
      expect(logged, 'the gateway delivery log and what the receiver got').toEqual(received)
    },
  }
}
