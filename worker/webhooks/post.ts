/**
 * One webhook HTTP attempt (spec 6): a JSON POST with the delivery headers, signed when the subscription has a
 * secret, within the delivery timeout, redirects not followed. Only a 2xx is success; everything else becomes a
 * classified failure the outbox can act on (retry, pause). Every POST also carries the Standard Webhooks headers
 * (standard.ts). A subscription made by an MCP client (SEP-3415 `events/subscribe`) gets the SEP's body instead of
 * spec 6's: `{eventId, name, timestamp, data, cursor}` with the spec payload as `data`, `webhook-id` set to the
 * event id and `X-MCP-Subscription-Id` naming the subscription.
 */
import type { EventType } from '../../schema/events'
import type { UrlPolicy } from '../../common/public-url'
import { guardedPost } from '../lib/guarded-post'
import { iso } from '../lib/time'
import { failureTypeForStatus, parseRetryAfter, type AttemptOutcome } from './policy'
import { identifiedBody, signatureFor } from './signing'
import { standardHeaders } from './standard'

export const WEBHOOK_USER_AGENT = 'MessagingGateway-Webhooks/1.0'

/** What an MCP subscription's delivery adds (SEP-3415 webhook event delivery). */
export type McpEnvelope = {
  subscriptionId: string
  /** When the event happened (the occurrence's `timestamp`). */
  occurredAt: number
  /** The safe-to-persist watermark (mcp/events/cursor.ts), null when none can be given. */
  cursor: string | null
}

export type WebhookRequest = {
  url: string
  /** The stored event payload; it goes out with `eventId` and `deliveryId` added, and the signature covers that. */
  body: string
  event: EventType
  eventId: string
  deliveryId: string
  attempt: number
  secret: string | null
  timeoutMs: number
  policy: UrlPolicy
  /** Test deliveries say so in a header; the payload keeps the exact event shape. */
  test?: boolean
  mcp?: McpEnvelope
}

/** Header names as sent; receivers read them case-insensitively. */
export const HEADERS = {
  event: 'X-Webhook-Event',
  delivery: 'X-Webhook-Delivery',
  attempt: 'X-Webhook-Attempt',
  timestamp: 'X-Webhook-Timestamp',
  signature: 'X-Webhook-Signature',
  test: 'X-Webhook-Test',
  mcpSubscription: 'X-MCP-Subscription-Id',
} as const

/** The body as sent and the Standard Webhooks message id it goes out under. */
export function deliveryBody(r: WebhookRequest): { body: string; messageId: string } {
  if (!r.mcp) return { body: identifiedBody(r.body, r.eventId, r.deliveryId), messageId: r.deliveryId }
  const data: unknown = JSON.parse(r.body)
  const occurrence = { eventId: r.eventId, name: r.event, timestamp: iso(r.mcp.occurredAt), data, cursor: r.mcp.cursor }
  return { body: JSON.stringify(occurrence), messageId: r.eventId }
}

/** Headers for the body as sent (`deliveryBody`), which is what both signatures cover. */
export async function buildHeaders(r: WebhookRequest, body: string, messageId: string, nowMs: number): Promise<Record<string, string>> {
  const ts = Math.floor(nowMs / 1000)
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': WEBHOOK_USER_AGENT,
    [HEADERS.event]: r.event,
    [HEADERS.delivery]: r.deliveryId,
    [HEADERS.attempt]: String(r.attempt),
    ...(await standardHeaders(r.secret, messageId, ts, body)),
  }
  if (r.secret) {
    headers[HEADERS.timestamp] = String(ts)
    headers[HEADERS.signature] = await signatureFor(r.secret, ts, body)
  }
  if (r.mcp) headers[HEADERS.mcpSubscription] = r.mcp.subscriptionId
  if (r.test) headers[HEADERS.test] = 'true'
  return headers
}

export async function postWebhook(r: WebhookRequest): Promise<AttemptOutcome> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const { body, messageId } = deliveryBody(r)
  const result = await guardedPost(r.url, r.policy, { headers: await buildHeaders(r, body, messageId, Date.now()), body, timeoutMs: r.timeoutMs })
  switch (result.kind) {
    case 'refused':
      return { ok: false, statusCode: null, failureType: 'permanent', message: `the URL is not allowed: ${result.reason}`, durationMs: 0, final: true }
    case 'timeout':
      return { ok: false, statusCode: null, failureType: 'timeout', message: `no answer within ${r.timeoutMs / 1000} s`, durationMs: elapsed() }
    case 'network':
      return { ok: false, statusCode: null, failureType: 'network', message: `could not connect: ${result.error}`, durationMs: elapsed() }
  }
  const { status, headers } = result
  if (status >= 200 && status < 300) return { ok: true, statusCode: status, durationMs: elapsed() }
  const durationMs = elapsed()
  if (status >= 300 && status < 400) {
    const to = headers.get('location')
    return {
      ok: false,
      statusCode: status,
      failureType: failureTypeForStatus(status),
      message: `answered a redirect (HTTP ${status}${to ? ` to ${to}` : ''}); redirects are not followed, update the URL`,
      durationMs,
    }
  }
  const outcome: AttemptOutcome = { ok: false, statusCode: status, failureType: failureTypeForStatus(status), message: `answered HTTP ${status}`, durationMs }
  // SEP-3415: an MCP receiver answers 410 (or 413) to refuse one delivery for good; it does not end the subscription.
  if (r.mcp && (status === 410 || status === 413)) return { ...outcome, final: true, message: `answered HTTP ${status}; this delivery is not retried` }
  if (status === 410) return { ...outcome, gone: true, message: 'answered 410 Gone; delivery to this URL is paused' }
  if (status === 429 || status === 503) {
    const retryAfterMs = parseRetryAfter(headers.get('retry-after'), Date.now())
    if (retryAfterMs !== undefined) return { ...outcome, retryAfterMs }
  }
  return outcome
}
