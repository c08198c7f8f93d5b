/**
 * API-key authentication (spec part 5). REST accepts the key in `Authorization: Bearer`, `X-API-Key` or the
 * `apiKey` query parameter (`allowQuery`). MCP does not use this middleware: `mcp/access.ts` refuses a key in the URL
 * outright (it leaks into logs and histories) and answers with MCP's own status for a disabled API.
 *
 * Lookups are cached per isolate for AUTH_CACHE_TTL_MS: every request would otherwise spend a D1 round trip on
 * the key (the dominant cost of small calls such as an inbound push). The admin API clears this isolate's cache on
 * every change, so a revocation or a switch takes effect at once here and within the TTL everywhere else.
 */
import { createMiddleware } from 'hono/factory'
import { tenantForApiKey } from '../db/api-keys'
import { database, type Db } from '../db/client'
import type { Tenant } from '../db/tenants'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { sha256Hex } from '../lib/crypto'
import { authFailed, refuseThrottled } from './auth-throttle'

export const AUTH_CACHE_TTL_MS = 5_000
/** An unknown key is remembered this long, so guessing does not cost a D1 read each time (issue 14 §2). */
export const UNKNOWN_KEY_TTL_MS = 30_000
const AUTH_CACHE_MAX_ENTRIES = 10_000

/** A known key's tenant and its reference (a hash prefix: what the per-key rate limit counts, never the key). */
const cache = new Map<string, { tenant: Tenant | null; ref: string; until: number }>()

/** Forgets every cached key lookup of this isolate (called by the admin API after any change). */
export function clearAuthCache(): void {
  cache.clear()
}

/** The tenant owning `key` and the key's reference, through this isolate's short-lived cache (REST and MCP). */
export async function authenticateKey(db: Db, key: string): Promise<{ tenant: Tenant; ref: string } | undefined> {
  const now = Date.now()
  const hit = cache.get(key)
  if (hit && hit.until > now) return hit.tenant ? { tenant: hit.tenant, ref: hit.ref } : undefined
  const tenant = await tenantForApiKey(db, key)
  if (cache.size >= AUTH_CACHE_MAX_ENTRIES) cache.clear()
  const ref = (await sha256Hex(key)).slice(0, 32)
  cache.set(key, { tenant: tenant ?? null, ref, until: now + (tenant ? AUTH_CACHE_TTL_MS : UNKNOWN_KEY_TTL_MS) })
  return tenant ? { tenant, ref } : undefined
}

export async function tenantForKey(db: Db, key: string): Promise<Tenant | undefined> {
  return (await authenticateKey(db, key))?.tenant
}

/**
 * Requests the Worker builds itself for a caller it has just authenticated (an MCP tool call runs its REST
 * operation in-process), with that caller's tenant: the REST app skips a second hash-and-lookup of the same key.
 * Only code in this isolate holds these Request objects, so no client can put an entry here.
 */
const vouched = new WeakMap<Request, Tenant>()

export function vouchFor<R extends Request>(request: R, tenant: Tenant): R {
  vouched.set(request, tenant)
  return request
}

export function keyFromHeaders(headers: Headers): string | undefined {
  const auth = headers.get('authorization')
  const bearer = auth && /^Bearer\s+(.+)$/i.exec(auth.trim())?.[1]
  return bearer || headers.get('x-api-key')?.trim() || undefined
}

export function apiKeyAuth({ allowQuery }: { allowQuery: boolean }) {
  return createMiddleware<AppEnv>(async function apiKeyAuth(c, next) {
    const known = vouched.get(c.req.raw)
    if (known) {
      c.set('tenant', known)
      return next()
    }
    const key = keyFromHeaders(c.req.raw.headers) ?? (allowQuery ? c.req.query('apiKey') : undefined)
    if (!key) throw new ApiError(401, 'unauthorized', 'An API key is required: send it as Authorization: Bearer <key> or X-API-Key')
    refuseThrottled(c)
    const found = await authenticateKey(database(c.env.DB), key)
    if (!found) return authFailed(c, new ApiError(401, 'unauthorized', 'The API key is invalid or revoked'))
    const { tenant } = found
    c.set('apiKeyRef', found.ref)
    // A tenant with the API switched off sees the API as absent (spec 4.1).
    if (!tenant.apiEnabled) throw new ApiError(404, 'api_not_enabled', 'The API is not enabled for this account')
    c.set('tenant', tenant)
    await next()
  })
}
