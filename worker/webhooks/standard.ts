/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com), sent beside spec 6's own headers on every
 * delivery so receivers can verify with the `standardwebhooks` libraries: `webhook-id` (the message id, the same on
 * every retry), `webhook-timestamp` (Unix seconds) and, when the subscription has a secret, `webhook-signature`:
 * `v1,` + base64(HMAC-SHA256(key, id + '.' + timestamp + '.' + raw body)).
 *
 * The key is what the reference libraries derive from the secret (`new Webhook(secret)` in the npm package): for
 * `whsec_<base64>` the decoded bytes, padding optional, as @stablelib/base64 reads it (this service's own secrets are
 * 43 base62 characters: valid base64 without padding, 32 bytes). A secret without the prefix, or whose remainder is
 * not base64, is keyed with its UTF-8 bytes, which the libraries do when told `format: 'raw'` (docs/webhooks.md).
 */
import { SIGNING_SECRET_PREFIX } from './signing'

export const STANDARD_HEADERS = { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' } as const

const encoder = new TextEncoder()
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

/** The bytes of base64 text (padding optional), or null when it is not base64. */
export function base64Bytes(text: string): Uint8Array<ArrayBuffer> | null {
  if (!BASE64.test(text) || text.replace(/=+$/, '').length % 4 === 1) return null
  let raw: string
  try {
    raw = atob(text)
  } catch {
    return null
  }
  return Uint8Array.from(raw, (c) => c.charCodeAt(0))
}

export function standardKey(secret: string): Uint8Array<ArrayBuffer> {
  const decoded = secret.startsWith(SIGNING_SECRET_PREFIX) ? base64Bytes(secret.slice(SIGNING_SECRET_PREFIX.length)) : null
  return decoded && decoded.length > 0 ? decoded : Uint8Array.from(encoder.encode(secret))
}

function toBase64(bytes: ArrayBuffer): string {
  let s = ''
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b)
  return btoa(s)
}

export async function standardSignature(secret: string, messageId: string, timestampS: number, body: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', standardKey(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return `v1,${toBase64(await crypto.subtle.sign('HMAC', key, encoder.encode(`${messageId}.${timestampS}.${body}`)))}`
}

/** The three headers for one POST; the signature only when there is a secret. */
export async function standardHeaders(secret: string | null, messageId: string, timestampS: number, body: string): Promise<Record<string, string>> {
  const headers: Record<string, string> = { [STANDARD_HEADERS.id]: messageId, [STANDARD_HEADERS.timestamp]: String(timestampS) }
  if (secret) headers[STANDARD_HEADERS.signature] = await standardSignature(secret, messageId, timestampS, body)
  return headers
}
