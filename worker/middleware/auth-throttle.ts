/**
 * Failed authentication per client address (issue 14 §2): wrong API keys and wrong admin tokens count on the
 * RL_AUTH_FAILURES binding; past its limit the address gets 429 for the rest of the period, answered from this
 * isolate's memory before any key is hashed or looked up, so guessing costs the service nothing more. The address is
 * Cloudflare's CF-Connecting-IP; without one (self-hosted workerd, the test runtime) there is nothing to key on.
 */
import type { Context } from 'hono'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { RATE_LIMITS } from '../lib/rate-limit'

const BLOCKED_MAX_ENTRIES = 10_000
const blockedUntil = new Map<string, number>()

export function clientAddress(c: Context<AppEnv>): string | null {
  return c.req.header('cf-connecting-ip') ?? null
}

function throttled(): ApiError {
  const s = RATE_LIMITS.RL_AUTH_FAILURES.periodS
  return new ApiError(429, 'rate_limited', 'Too many failed authentication attempts from this address; try again later', s)
}

/** Refuses an address that failed too often, before its credentials are checked. */
export function refuseThrottled(c: Context<AppEnv>, now = Date.now()): void {
  const ip = clientAddress(c)
  const until = ip === null ? undefined : blockedUntil.get(ip)
  if (until === undefined) return
  if (until > now) throw throttled()
  blockedUntil.delete(ip!)
}

/** Counts a failed attempt; answers the 429 once the address is past the limit, else the caller's own 401. */
export async function authFailed(c: Context<AppEnv>, unauthorized: ApiError, now = Date.now()): Promise<never> {
  const ip = clientAddress(c)
  const binding = c.env.RL_AUTH_FAILURES as RateLimit | undefined
  if (ip !== null && binding) {
    const { success } = await binding.limit({ key: ip })
    if (!success) {
      if (blockedUntil.size >= BLOCKED_MAX_ENTRIES) blockedUntil.clear()
      blockedUntil.set(ip, now + RATE_LIMITS.RL_AUTH_FAILURES.periodS * 1000)
      throw throttled()
    }
  }
  throw unauthorized
}
