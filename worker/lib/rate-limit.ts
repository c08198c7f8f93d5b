/**
 * Abuse limits on shared resources, on Cloudflare's Workers Rate Limiting binding: each `[[ratelimits]]` entry of
 * wrangler.toml is one (limit, period) counted per key. Counts are per Cloudflare location and approximate: they
 * keep one tenant from hurting the others, while exact per-plan quotas (daily caps) stay in the AccountDO.
 * RATE_LIMITS is the one table the middleware, the OpenAPI description and the generated docs table follow. Every
 * limit checked for a request is noted for its `RateLimit-Policy` / `RateLimit` headers (lib/rate-limit-state.ts).
 */
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { noteRateLimit, rateLimitClock, seenLocally } from './rate-limit-state'

export type RateLimitName =
  | 'RL_API_KEY'
  | 'RL_TENANT'
  | 'RL_INBOUND'
  | 'RL_CONNECT_NUMBER'
  | 'RL_CONNECT_TENANT'
  | 'RL_PAIRING_CODE'
  | 'RL_WEBHOOK_TEST'
  | 'RL_AUTH_FAILURES'
  | 'RL_LOGIN_STEP'

export type RateLimitRule = {
  limit: number
  /** 10 or 60: the binding offers nothing else. */
  periodS: 10 | 60
  per: string
  what: string
  /** Its name in the RateLimit-Policy and RateLimit headers. */
  policy: string
}

/** Mirrors wrangler.toml (a test checks they agree). */
export const RATE_LIMITS: Record<RateLimitName, RateLimitRule> = {
  RL_API_KEY: { limit: 6000, periodS: 10, per: 'API key', what: 'requests under /v1 and /mcp', policy: 'api-key' },
  RL_TENANT: { limit: 12000, periodS: 10, per: 'tenant', what: 'requests under /v1 and /mcp, all keys together', policy: 'tenant' },
  RL_INBOUND: { limit: 6000, periodS: 10, per: 'tenant', what: 'POST /v1/channels/custom/inbound', policy: 'inbound' },
  RL_CONNECT_NUMBER: { limit: 5, periodS: 60, per: 'tenant and number', what: 'POST /v1/channels/alpha-web/connections', policy: 'connect-number' },
  RL_CONNECT_TENANT: { limit: 20, periodS: 60, per: 'tenant', what: 'POST /v1/channels/alpha-web/connections', policy: 'connect-tenant' },
  RL_PAIRING_CODE: {
    limit: 3,
    periodS: 60,
    per: 'phone number, across tenants',
    what: 'connects with link_method pairing_code (each prompts the phone)',
    policy: 'pairing-code',
  },
  RL_WEBHOOK_TEST: { limit: 10, periodS: 60, per: 'tenant', what: 'POST /v1/webhooks/{webhookId}/test', policy: 'webhook-test' },
  RL_AUTH_FAILURES: { limit: 20, periodS: 60, per: 'client address', what: 'wrong API keys and admin tokens', policy: 'auth-failures' },
  RL_LOGIN_STEP: {
    limit: 10,
    periodS: 60,
    per: 'tenant and number',
    what: 'beta login codes and passwords submitted (the verify routes and the hosted page together)',
    policy: 'login-step',
  },
}

/**
 * Counts one use of `name` for `key`; past the limit, a 429 in the route family's error shape with Retry-After (the
 * binding says no more than "over": the whole period is the honest wait). A binding missing from the environment
 * (a self-hosted workerd configured without it) limits nothing.
 */
export async function enforce(c: Context<AppEnv>, name: RateLimitName, key: string, message: string): Promise<void> {
  const binding = c.env[name] as RateLimit | undefined
  if (!binding) return
  const { success } = await binding.limit({ key })
  const rule = RATE_LIMITS[name]
  noteRateLimit(c, seenLocally(rule, `${name}:${key}`, success, rateLimitClock.now()))
  if (!success) throw new ApiError(429, 'rate_limited', message, rule.periodS)
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
