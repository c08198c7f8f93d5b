/**
 * The callback verification of SEP-3415 ("Endpoint verification"): before an MCP client's callback URL gets any
 * delivery, it is sent a signed `{"type":"verification","challenge":"<nonce>"}` (headed like a delivery) and must
 * echo the nonce in a 2xx JSON body `{"challenge": "<nonce>"}`, compared in constant time. This stops anyone from
 * pointing deliveries at a URL that never asked for them. The outcome is a category only, never the receiver's
 * own words (no response oracle for an attacker-chosen URL).
 */
import { z } from 'zod'
import type { UrlPolicy } from '../../common/public-url'
import { randomBase62, timingSafeEqual } from '../lib/crypto'
import { guardedPost } from '../lib/guarded-post'
import { HEADERS, WEBHOOK_USER_AGENT } from './post'
import { standardHeaders } from './standard'

/** The echo is a few dozen bytes; nothing larger is read. */
const ECHO_MAX_BYTES = 4096

export type VerifyOutcome =
  | { ok: true }
  | { ok: false; reason: 'refused'; detail: string }
  | { ok: false; reason: 'connection_refused' | 'timeout' | 'tls_error' | 'http_4xx' | 'http_5xx' | 'challenge_failed' }

const Echo = z.object({ challenge: z.string() })

function echoed(body: string | null | undefined, challenge: string): boolean {
  if (!body) return false
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    return false
  }
  const parsed = Echo.safeParse(json)
  return parsed.success && timingSafeEqual(parsed.data.challenge, challenge)
}

export async function verifyEndpoint(
  url: string,
  secret: string,
  subscriptionId: string,
  opts: { policy: UrlPolicy; timeoutMs: number; nowMs: number }
): Promise<VerifyOutcome> {
  const challenge = randomBase62(32)
  const body = JSON.stringify({ type: 'verification', challenge })
  const messageId = `msg_verification_${randomBase62(22)}`
  const headers = {
    'Content-Type': 'application/json',
    'User-Agent': WEBHOOK_USER_AGENT,
    [HEADERS.mcpSubscription]: subscriptionId,
    ...(await standardHeaders(secret, messageId, Math.floor(opts.nowMs / 1000), body)),
  }
  const result = await guardedPost(url, opts.policy, { headers, body, timeoutMs: opts.timeoutMs, readBodyBytes: ECHO_MAX_BYTES })
  switch (result.kind) {
    case 'refused':
      return { ok: false, reason: 'refused', detail: result.reason }
    case 'timeout':
      return { ok: false, reason: 'timeout' }
    case 'network':
      return { ok: false, reason: /tls|ssl|certificate/i.test(result.error) ? 'tls_error' : 'connection_refused' }
  }
  if (result.status >= 500) return { ok: false, reason: 'http_5xx' }
  if (result.status >= 400) return { ok: false, reason: 'http_4xx' }
  // A redirect is not followed (it could point anywhere), so it echoes nothing.
  return result.status < 300 && echoed(result.body, challenge) ? { ok: true } : { ok: false, reason: 'challenge_failed' }
}
