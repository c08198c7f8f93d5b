/**
 * Signed, expiring tokens for links that work without an API key (the hosted connect page): the payload in
 * base64url, then an HMAC-SHA256 over it under a key derived from ENCRYPTION_KEY and the token's purpose, so a
 * token minted for one purpose is worthless for another.
 */
import { base64urlText, fromBase64urlText } from './base64url'
import { z } from 'zod'
import { hmacSha256Hex, timingSafeEqual } from './crypto'

const Expiry = z.object({ exp: z.number().int() })

export async function signToken(secret: string, purpose: string, payload: Record<string, unknown>, expiresAt: number): Promise<string> {
  const body = base64urlText(JSON.stringify({ ...payload, exp: expiresAt }))
  return `${body}.${await hmacSha256Hex(`${purpose}\u0000${secret}`, body)}`
}

export type TokenCheck<T> = { ok: true; payload: T; expiresAt: number } | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' }

export async function verifyToken<S extends z.ZodType>(secret: string, purpose: string, token: string, shape: S, now: number): Promise<TokenCheck<z.infer<S>>> {
  const [body, sig, extra] = token.split('.')
  if (!body || !sig || extra !== undefined || token.length > 2048) return { ok: false, reason: 'malformed' }
  if (!timingSafeEqual(sig, await hmacSha256Hex(`${purpose}\u0000${secret}`, body))) return { ok: false, reason: 'bad_signature' }
  const text = fromBase64urlText(body)
  let json: unknown
  try {
    json = text === null ? null : JSON.parse(text)
  } catch {
    json = null
  }
  const envelope = Expiry.safeParse(json)
  const parsed = shape.safeParse(json)
  if (!envelope.success || !parsed.success) return { ok: false, reason: 'malformed' }
  if (envelope.data.exp <= now) return { ok: false, reason: 'expired' }
  return { ok: true, payload: parsed.data, expiresAt: envelope.data.exp }
}
