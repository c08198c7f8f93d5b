/**
 * X-Hub-Signature-256 (upstreams 5.2): `sha256=` + hex HMAC-SHA256 of the raw request bytes under the App Secret.
 * Checked over the bytes as received, never over re-serialised JSON, with a constant-time compare.
 */
import { timingSafeEqual, toHex } from '../../lib/crypto'

export const SIGNATURE_HEADER = 'X-Hub-Signature-256'

export async function hubSignature(secret: string, rawBody: Uint8Array): Promise<string> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return `sha256=${toHex(await crypto.subtle.sign('HMAC', key, rawBody))}`
}

export async function verifyHubSignature(secret: string, rawBody: Uint8Array, header: string | undefined | null): Promise<boolean> {
  if (!header || !header.startsWith('sha256=')) return false
  return timingSafeEqual(header.toLowerCase(), await hubSignature(secret, rawBody))
}
