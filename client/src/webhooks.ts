/**
 * Webhook signature verification (spec part 6, docs/webhooks.md): `X-Webhook-Signature: v1=<hex>` is
 * HMAC-SHA256(secret, timestamp + "." + raw body), timestamps older than 5 minutes are refused (replays), and the
 * signed body's `delivery_id` must be the `X-Webhook-Delivery` header. Web Crypto only, so it runs in Node 20+,
 * Workers, Deno, Bun and browsers; the comparison is the platform's constant-time HMAC verify.
 */

/** The spec's suggested signature age tolerance. */
export const WEBHOOK_TOLERANCE_S = 300

export type WebhookEvent = {
  event: string
  created_at: string
  delivery_id: string
  [field: string]: unknown
}

export type WebhookFailure = 'no_signature' | 'bad_timestamp' | 'too_old' | 'bad_signature' | 'not_json' | 'delivery_mismatch'

export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: WebhookFailure,
    message: string
  ) {
    super(message)
    this.name = 'WebhookVerificationError'
  }
}

export type VerifyWebhookInput = {
  /** The subscription's signing secret (`whsec_…`). */
  secret: string
  /** The request's headers: a Headers object, or Node's `req.headers` (lower-case names). */
  headers: Headers | Record<string, string | string[] | undefined>
  /** The raw body exactly as received, before any JSON parsing. */
  body: string | Uint8Array
  toleranceS?: number
  /** Unix seconds now (tests). */
  nowS?: number
}

function header(headers: VerifyWebhookInput['headers'], name: string): string | null {
  if (headers instanceof Headers) return headers.get(name)
  const v = headers[name]
  return Array.isArray(v) ? (v[0] ?? null) : (v ?? null)
}

function hexBytes(hex: string): Uint8Array<ArrayBuffer> | null {
  if (!/^(?:[0-9a-f]{2})+$/i.test(hex)) return null
  const out = new Uint8Array(hex.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return out
}

const isEvent = (v: unknown): v is WebhookEvent =>
  typeof v === 'object' && v !== null && 'event' in v && typeof v.event === 'string' && 'delivery_id' in v && typeof v.delivery_id === 'string'

/** The event when the delivery is genuine and fresh; throws WebhookVerificationError saying why otherwise. */
export async function verifyWebhook(input: VerifyWebhookInput): Promise<WebhookEvent> {
  const timestamp = header(input.headers, 'x-webhook-timestamp')
  const signature = header(input.headers, 'x-webhook-signature')
  if (!signature?.startsWith('v1=')) throw new WebhookVerificationError('no_signature', 'no v1= X-Webhook-Signature header (is signing on?)')
  if (!timestamp || !/^\d+$/.test(timestamp)) throw new WebhookVerificationError('bad_timestamp', 'X-Webhook-Timestamp is missing or not Unix seconds')
  const now = input.nowS ?? Math.floor(Date.now() / 1000)
  if (Math.abs(now - Number(timestamp)) > (input.toleranceS ?? WEBHOOK_TOLERANCE_S))
    throw new WebhookVerificationError('too_old', 'the delivery was signed too long ago (or the clocks disagree)')
  const raw = typeof input.body === 'string' ? new TextEncoder().encode(input.body) : input.body
  const prefix = new TextEncoder().encode(`${timestamp}.`)
  const signed = new Uint8Array(prefix.length + raw.length)
  signed.set(prefix)
  signed.set(raw, prefix.length)
  const given = hexBytes(signature.slice(3))
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(input.secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])
  if (!given || !(await crypto.subtle.verify('HMAC', key, given, signed)))
    throw new WebhookVerificationError('bad_signature', 'the signature does not match the body and timestamp')
  let event: unknown
  try {
    event = JSON.parse(new TextDecoder().decode(raw))
  } catch {
    throw new WebhookVerificationError('not_json', 'the signed body is not JSON')
  }
  if (!isEvent(event)) throw new WebhookVerificationError('not_json', 'the signed body is not an event')
  // The delivery id is signed inside the body: a body re-sent under another X-Webhook-Delivery is refused.
  if (event.delivery_id !== header(input.headers, 'x-webhook-delivery'))
    throw new WebhookVerificationError('delivery_mismatch', 'X-Webhook-Delivery is not the signed delivery_id')
  return event
}
