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

/**
 * One counter's fixed window in this isolate: requests seen; how many more the binding's last "allowed" stands for
 * (a sampled rule's); whether its last answer was "over".
 */
export type LocalWindow = { start: number; used: number; credit: number; over: boolean }
const windows = new Map<string, LocalWindow>()

/**
 * Counts one request of `counter` in this isolate's current fixed window of the rule's period (windows start at
 * multiples of the period since the epoch) and answers the window.
 */
export function countLocally(rule: RateLimitRule, counter: string, now: number): LocalWindow {
  const periodMs = rule.periodS * 1000
  const start = now - (now % periodMs)
  let w = windows.get(counter)
  if (!w || w.start !== start) {
    if (windows.size >= WINDOWS_MAX_ENTRIES) windows.clear()
    w = { start, used: 0, credit: 0, over: false }
    windows.set(counter, w)
  }
  w.used++
  return w
}

/**
 * Whether the binding admits this request, asking it only when needed (lib/abuse-limits.ts `sampleEvery`): an ask
 * stands for the request that asks and the next n - 1, so the first request of a window asks and then every n-th;
 * while the last answer was "over" every request asks, so a refusal lasts exactly as long as the binding's.
 * The credit is granted when the ask starts, not when it is answered: requests that arrive meanwhile take it instead
 * of asking too (which would count them up to n times over), and they cannot wait for the ask instead, since a
 * request in workerd must not wait on another request's I/O (it would hang). So up to n - 1 requests may pass
 * while an ask that ends "over" is in flight: the same bound as sampling itself.
 */
export async function bindingAllows(rule: RateLimitRule, w: LocalWindow, ask: () => Promise<RateLimitOutcome>): Promise<boolean> {
  if (!w.over && w.credit > 0) {
    w.credit--
    return true
  }
  const every = rule.sampleEvery ?? 1
  if (!w.over) w.credit = every - 1
  const { success } = await ask()
  if (!success) {
    w.over = true
    w.credit = 0
  } else if (w.over) {
    w.over = false
    w.credit = every - 1
  }
  return success
}

/** The limit's state for the headers after this request: `allowed` false reports nothing left. */
export function windowState(rule: RateLimitRule, w: LocalWindow, allowed: boolean, now: number): RateLimitState {
  return {
    policy: rule.policy,
    quota: rule.limit,
    windowS: rule.periodS,
    remaining: allowed ? Math.max(0, rule.limit - w.used) : 0,
    resetS: Math.max(1, Math.ceil((w.start + rule.periodS * 1000 - now) / 1000)),
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
