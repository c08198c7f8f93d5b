/**
 * Delivery identity and signatures. A delivery id is derived from (event, subscription), so every retry and every
 * replay of that pair carries the same X-Webhook-Delivery; the body carries it too (`event_id`, `delivery_id`),
 * inside the signature. The signature is spec 6's:
 * `v1=` + hex(HMAC-SHA256(secret, timestamp + '.' + raw body)), keyed with the secret string's UTF-8 bytes.
 */
import { z } from 'zod'
import { DeliveryIdentity } from '../../schema/events'
import { hmacSha256Hex, randomBase62 } from '../lib/crypto'

export const SIGNING_SECRET_PREFIX = 'whsec_'
/** 43 base62 characters carry 256 bits. */
const SECRET_CHARS = 43

export function newSigningSecret(): string {
  return `${SIGNING_SECRET_PREFIX}${randomBase62(SECRET_CHARS)}`
}

/**
 * `dlv_` + the event id's 22 characters + the subscription id's 22 (both fixed-length base62): unique per pair,
 * and the same expression runs in SQL where the fan-out writes deliveries (db/webhook-deliveries.ts).
 */
export function deliveryIdFor(eventId: string, webhookId: string): string {
  return `dlv_${eventId.slice('evt_'.length)}${webhookId.slice('wh_'.length)}`
}

export async function signatureFor(secret: string, timestampS: number, rawBody: string): Promise<string> {
  return `v1=${await hmacSha256Hex(secret, `${timestampS}.${rawBody}`)}`
}

const StoredBody = z.record(z.string(), z.unknown())

/**
 * The stored event payload with the delivery's identity added (after every spec field, which stay as they are), so
 * the signature covers it: a body captured from one delivery fails verification once its ids are changed, and a
 * receiver that checks the header against the body cannot be fed the same body under another delivery id.
 */
export function identifiedBody(storedBody: string, eventId: string, deliveryId: string): string {
  const identity = DeliveryIdentity.parse({ event_id: eventId, delivery_id: deliveryId })
  return JSON.stringify({ ...StoredBody.parse(JSON.parse(storedBody)), ...identity })
}
