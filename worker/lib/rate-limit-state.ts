/**
 * What a /v1 answer says about the limits that applied to it (docs/api.md "Rate-limit headers";
 * draft-ietf-httpapi-ratelimit-headers): each limit checked for the request is noted on the context, and
 * middleware/rate-limit-headers.ts renders them as `RateLimit-Policy` and `RateLimit`.
 *
 * The Workers Rate Limiting binding answers only "over" or not, never a count, so `r` for those limits is what this
 * isolate counted for the key in the current window: exact for a client whose requests land on one isolate (one
 * connection, `wrangler dev`), an upper bound when several isolates or locations share the key; an "over" from the
 * binding always reports 0. Counting is a map update in memory: no storage round trip per request.
 */
import type { Context } from 'hono'
import type { AppEnv, RateLimitState } from '../env'
import type { RateLimitRule } from './abuse-limits'

export type { RateLimitState }

/** The clock the window counts read; tests replace it to stay inside one window. */
export const rateLimitClock = { now: () => Date.now() }

const WINDOWS_MAX_ENTRIES = 10_000
const windows = new Map<string, { start: number; used: number }>()

/**
 * Counts one request of `counter` in this isolate's current fixed window of the rule's period (windows start at
 * multiples of the period since the epoch) and answers the limit's state after it.
 */
export function seenLocally(rule: RateLimitRule, counter: string, allowed: boolean, now: number): RateLimitState {
  const periodMs = rule.periodS * 1000
  const start = now - (now % periodMs)
  let w = windows.get(counter)
  if (!w || w.start !== start) {
    if (windows.size >= WINDOWS_MAX_ENTRIES) windows.clear()
    w = { start, used: 0 }
    windows.set(counter, w)
  }
  w.used++
  return {
    policy: rule.policy,
    quota: rule.limit,
    windowS: rule.periodS,
    remaining: allowed ? Math.max(0, rule.limit - w.used) : 0,
    resetS: Math.max(1, Math.ceil((start + periodMs - now) / 1000)),
  }
}

/** Adds a limit to the request's headers; a policy noted twice keeps its latest state. */
export function noteRateLimit(c: Context<AppEnv>, state: RateLimitState): void {
  const noted = (c.get('rateLimits') ?? []).filter((s) => s.policy !== state.policy)
  c.set('rateLimits', [...noted, state])
}

/** `"api-key";q=6000;w=10, "daily-sends";q=50;w=86400` */
export function policyHeader(states: readonly RateLimitState[]): string {
  return states.map((s) => `"${s.policy}";q=${s.quota};w=${s.windowS}`).join(', ')
}

/** `"api-key";r=5999;t=7, "daily-sends";r=49;t=40000` */
export function limitHeader(states: readonly RateLimitState[]): string {
  return states.map((s) => `"${s.policy}";r=${s.remaining};t=${s.resetS}`).join(', ')
}
