/**
 * Small crypto helpers on WebCrypto: random base62 tokens, SHA-256 / HMAC digests, and AES-GCM sealing for
 * secrets that must be read back (custom channel URL, signing secrets, provider tokens).
 */
import { base64urlBytes, fromBase64urlBytes } from './base64url'
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const encoder = new TextEncoder()

/** `length` characters drawn uniformly from base62 (rejection sampling keeps the distribution flat). */
export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2))
    for (const b of bytes) {
      if (b < 248 && out.length < length) out += BASE62[b % 62]
    }
  }
  return out
}

export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

export async function sha256Hex(input: string): Promise<string> {
  return toHex(await crypto.subtle.digest('SHA-256', encoder.encode(input)))
}

export async function hmacSha256Hex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return toHex(await crypto.subtle.sign('HMAC', key, encoder.encode(message)))
}

/** Constant-time comparison of two strings (for tokens and signatures). */
export function timingSafeEqual(a: string, b: string): boolean {
  const ab = encoder.encode(a)
  const bb = encoder.encode(b)
  let diff = ab.length ^ bb.length
  for (let i = 0; i < Math.max(ab.length, bb.length); i++) diff |= (ab[i] ?? 0) ^ (bb[i] ?? 0)
  return diff === 0
}

const keyCache = new Map<string, Promise<CryptoKey>>()

/** The AES-256-GCM key from the `ENCRYPTION_KEY` secret (base64 of 32 bytes, or any passphrase, hashed to 32 bytes). */
function aesKey(secret: string): Promise<CryptoKey> {
  let key = keyCache.get(secret)
  if (!key) {
    key = crypto.subtle.digest('SHA-256', encoder.encode(secret)).then((raw) => crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']))
    keyCache.set(secret, key)
  }
  return key
}

const SEALED_PREFIX = 'v1.'

/** Seals a string as `v1.<iv>.<ciphertext>`; the version prefix leaves room for key rotation. */
export async function seal(secret: string, plaintext: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12))
  const data = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, await aesKey(secret), encoder.encode(plaintext))
  return `${SEALED_PREFIX}${base64urlBytes(iv)}.${base64urlBytes(new Uint8Array(data))}`
}

export async function unseal(secret: string, sealed: string): Promise<string> {
  if (!sealed.startsWith(SEALED_PREFIX)) throw new Error('unknown sealed-value version')
  const [iv, data] = sealed.slice(SEALED_PREFIX.length).split('.')
  if (!iv || !data) throw new Error('malformed sealed value')
  const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: fromBase64urlBytes(iv) }, await aesKey(secret), fromBase64urlBytes(data))
  return new TextDecoder().decode(plain)
}
