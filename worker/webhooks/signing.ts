/**
 * Delivery identity and signatures. A delivery id is derived from (event, subscription), so every retry and every
 * replay of that pair carries the same X-Webhook-Delivery. The signature is spec 6's:
 * `v1=` + hex(HMAC-SHA256(secret, timestamp + '.' + raw body)), keyed with the secret string's UTF-8 bytes.
 */
import { hmacSha256Hex, randomBase62, sha256Hex } from '../lib/crypto'

export const SIGNING_SECRET_PREFIX = 'whsec_'
/** 43 base62 characters carry 256 bits. */
const SECRET_CHARS = 43

export function newSigningSecret(): string {
  return `${SIGNING_SECRET_PREFIX}${randomBase62(SECRET_CHARS)}`
}

export async function deliveryIdFor(eventId: string, webhookId: string): Promise<string> {
  return `dlv_${(await sha256Hex(`${eventId}\u0000${webhookId}`)).slice(0, 32)}`
}

export async function signatureFor(secret: string, timestampS: number, rawBody: string): Promise<string> {
  return `v1=${await hmacSha256Hex(secret, `${timestampS}.${rawBody}`)}`
}
