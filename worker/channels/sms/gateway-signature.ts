/**
 * SMS Gateway for Android webhook signing (upstreams.md 4.4): `X-Signature` is lowercase hex
 * HMAC-SHA256(signingKey, rawBody + X-Timestamp), `X-Timestamp` Unix seconds. Verified over the raw body as
 * received; a timestamp more than 5 minutes off is refused (spec 8's signature age tolerance).
 */
import { hmacSha256Hex, timingSafeEqual } from '../../lib/crypto'

export const GATEWAY_SIGNATURE_MAX_AGE_S = 300

export function gatewaySignature(signingKey: string, rawBody: string, timestamp: string): Promise<string> {
  return hmacSha256Hex(signingKey, rawBody + timestamp)
}

export type GatewayVerdict = { ok: true } | { ok: false; reason: 'missing' | 'stale' | 'mismatch' }

export async function verifyGatewaySignature(
  signingKey: string,
  rawBody: string,
  signature: string | undefined,
  timestamp: string | undefined,
  nowMs: number
): Promise<GatewayVerdict> {
  if (!signature || !timestamp || !/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'missing' }
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > GATEWAY_SIGNATURE_MAX_AGE_S) return { ok: false, reason: 'stale' }
  const expected = await gatewaySignature(signingKey, rawBody, timestamp)
  return timingSafeEqual(expected, signature.toLowerCase()) ? { ok: true } : { ok: false, reason: 'mismatch' }
}
