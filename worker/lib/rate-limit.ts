/**
 * Abuse limits on shared resources, on Cloudflare's Workers Rate Limiting binding: each `[[ratelimits]]` entry of
 * wrangler.toml is one (limit, period) counted per key. Counts are per Cloudflare location and approximate: they
 * keep one tenant from hurting the others, while exact per-plan quotas (daily caps) stay in the AccountDO.
 * The table itself is lib/abuse-limits.ts. Every
 * limit checked for a request is noted for its `RateLimit-Policy` / `RateLimit` headers (lib/rate-limit-state.ts).
 */
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { RATE_LIMITS, type RateLimitName } from './abuse-limits'
import { bindingAllows, countLocally, noteRateLimit, rateLimitClock, windowState } from './rate-limit-state'

export { RATE_LIMITS, type RateLimitName, type RateLimitRule } from './abuse-limits'

/**
 * Counts one use of `name` for `key`; past the limit, a 429 in the route family's error shape with Retry-After (the
 * binding says no more than "over": the whole period is the honest wait). The binding is asked when `bindingAllows`
 * needs it (a sampled rule asks for one request in `sampleEvery`, lib/abuse-limits.ts) unless the key's limit
 * already holds this one (`heldByKeyLimit`). A binding missing from the environment (a self-hosted workerd configured
 * without it) limits nothing.
 */
export async function enforce(c: Context<AppEnv>, name: RateLimitName, key: string, message: string): Promise<void> {
  const binding = c.env[name] as RateLimit | undefined
  if (!binding) return
  const rule = RATE_LIMITS[name]
  const now = rateLimitClock.now()
  const window = countLocally(rule, `${name}:${key}`, now)
  const success = heldByKeyLimit(c, name, key) || (await bindingAllows(rule, window, () => binding.limit({ key })))
  noteRateLimit(c, windowState(rule, window, success, now))
  if (!success) throw new ApiError(429, 'rate_limited', message, rule.periodS)
}

/**
 * Whether a limit on the tenant cannot be reached by this request, so asking its binding would only answer "allowed"
 * (and cost a call: a round trip to the limiter under wrangler dev, the larger part of a small request's CPU): the
 * request's key was counted against RL_API_KEY just before (requestLimits; a key that limit refused went no further),
 * it is the tenant's only live key, and the limit allows at least as many requests as the key's in the same period.
 * The tenant's count can then never pass the key's. A key minted meanwhile counts from the next lookup of this key:
 * at once in the isolate that minted it (its key cache is cleared), within AUTH_CACHE_TTL_MS (5 s) elsewhere. The
 * limit is still noted for the RateLimit headers, from this isolate's count as always.
 */
export function heldByKeyLimit(c: Context<AppEnv>, name: RateLimitName, key: string): boolean {
  const rule = RATE_LIMITS[name]
  const perKey = RATE_LIMITS.RL_API_KEY
  return (
    name !== 'RL_API_KEY' &&
    rule.per === 'tenant' &&
    key === c.get('tenant')?.id &&
    c.get('tenantKeys') === 1 &&
    c.get('apiKeyRef') !== undefined &&
    c.env.RL_API_KEY !== undefined &&
    rule.periodS === perKey.periodS &&
    rule.limit >= perKey.limit
  )
}

/**
 * Requests per API key and per tenant, after authentication (REST and /mcp). The REST calls an MCP tool makes
 * in-process carry no key reference and were counted once already, at /mcp.
 */
export const requestLimits = createMiddleware<AppEnv>(async function requestLimits(c, next) {
  const ref = c.get('apiKeyRef')
  if (ref) {
    await enforce(c, 'RL_API_KEY', ref, 'Too many requests with this API key; slow down')
    await enforce(c, 'RL_TENANT', c.get('tenant').id, 'Too many requests for this account; slow down')
  }
  await next()
})

/**
 * A linking call for a number: per tenant and number, per tenant, and, for pairing codes, per phone number across
 * every tenant, since each code request makes the phone show a "link a device" prompt and nobody may make someone
 * else's phone do that over and over.
 */
export async function connectLimits(c: Context<AppEnv>, tenantId: string, phone: string, linkMethod: 'qr' | 'pairing_code'): Promise<void> {
  await enforce(c, 'RL_CONNECT_NUMBER', `${tenantId}:${phone}`, 'This number was asked to link too often; wait a minute before trying again')
  await enforce(c, 'RL_CONNECT_TENANT', tenantId, 'Too many linking requests for this account; wait a minute')
  if (linkMethod === 'pairing_code') await enforce(c, 'RL_PAIRING_CODE', phone, 'Too many pairing codes were requested for this phone number; wait a minute')
}

/**
 * A login code or password submitted for a number, by the REST verify routes or the hosted page alike (one counter,
 * so the page's token buys no extra guesses). beta ends a login after 5 wrong codes anyway; this keeps anyone holding
 * a link from spending the relay's and beta's patience faster than a person types.
 */
export async function loginStepLimit(c: Context<AppEnv>, tenantId: string, phone: string): Promise<void> {
  await enforce(c, 'RL_LOGIN_STEP', `${tenantId}:${phone}`, 'Too many login codes or passwords were tried for this number; wait a minute before trying again')
}
