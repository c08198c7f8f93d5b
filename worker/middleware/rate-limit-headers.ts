/**
 * `RateLimit-Policy` and `RateLimit` on every /v1 answer (draft-ietf-httpapi-ratelimit-headers, structured-field
 * syntax of drafts 09 to 11): one item per limit checked for the request, as lib/rate-limit-state.ts noted them:
 * the per-key and per-tenant request limits on every authenticated call, a route's own limit where it has one, and
 * the account's daily send cap on a send. Nothing noted (no key, an unknown key), no headers.
 */
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../env'
import { limitHeader, policyHeader } from '../lib/rate-limit-state'

export const rateLimitHeaders = createMiddleware<AppEnv>(async function rateLimitHeaders(c, next) {
  await next()
  const states = c.get('rateLimits')
  if (!states?.length) return
  // A response passed through from elsewhere (a media stream) may have immutable headers: copy it first.
  try {
    c.res.headers.set('RateLimit-Policy', policyHeader(states))
  } catch {
    c.res = new Response(c.res.body, c.res)
    c.res.headers.set('RateLimit-Policy', policyHeader(states))
  }
  c.res.headers.set('RateLimit', limitHeader(states))
})
