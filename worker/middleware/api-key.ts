/**
 * API-key authentication (spec part 5). REST accepts the key in `Authorization: Bearer`, `X-API-Key` or the
 * `apiKey` query parameter (`allowQuery`). MCP does not use this middleware: `mcp/access.ts` refuses a key in the URL
 * outright (it leaks into logs and histories) and answers with MCP's own status for a disabled API.
 *
 * Lookups are cached per isolate for AUTH_CACHE_TTL_MS: every request would otherwise spend a D1 round trip on
 * the key (the dominant cost of small calls such as an inbound push). The admin API and key revocation clear this
 * isolate's cache on every change, so a revocation or a switch takes effect at once here and within
 * AUTH_CACHE_TTL_MS (5 s) in every other isolate (tested on an injected clock: test/worker/middleware/api-key.test.ts).
 */
import type { Context, MiddlewareHandler } from 'hono'
import { createMiddleware } from 'hono/factory'
import { ownerOfApiKey, type KeyOwner } from '../db/api-keys'
import type { Db } from '../db/client'
import { clearPlacementCache } from '../db/placement'
import { directory, shardDb } from '../db/shards'
import type { Tenant } from '../db/tenants'
import type { AppEnv, KeyGrant } from '../env'
import { ApiError } from '../errors'
import { sha256Hex } from '../lib/crypto'
import { fullGrant } from '../safety/grant'
import { authFailed, refuseThrottled } from './auth-throttle'

export const AUTH_CACHE_TTL_MS = 5_000
/** An unknown key is remembered this long, so guessing does not cost a D1 read each time (issue 14 §2). */
export const UNKNOWN_KEY_TTL_MS = 30_000
const AUTH_CACHE_MAX_ENTRIES = 10_000

/** A key's owner (tenant and grant) or null for an unknown key, and the key's reference (a hash prefix: what the per-key rate limit counts, never the key). */
type Owner = KeyOwner & { tenantKeys: number }
const cache = new Map<string, { owner: Owner | null; ref: string; until: number }>()

/** Forgets every cached key and placement lookup of this isolate (called by the admin API after any change). */
export function clearAuthCache(): void {
  cache.clear()
  clearPlacementCache()
}

/**
 * The tenant owning `key`, the key's grant and its reference, through this isolate's short-lived cache (REST and MCP
 * both authenticate here). An unknown key is remembered too, longer, so guessing costs no D1 read each time.
 */
export async function authenticateKey(db: Db, key: string, now = Date.now()): Promise<(Owner & { ref: string }) | undefined> {
  const hit = cache.get(key)
  if (hit && hit.until > now) return hit.owner ? { ...hit.owner, ref: hit.ref } : undefined
  const owner = await ownerOfApiKey(db, key)
  if (cache.size >= AUTH_CACHE_MAX_ENTRIES) cache.clear()
  const ref = (await sha256Hex(key)).slice(0, 32)
  cache.set(key, { owner: owner ?? null, ref, until: now + (owner ? AUTH_CACHE_TTL_MS : UNKNOWN_KEY_TTL_MS) })
  return owner ? { ...owner, ref } : undefined
}

export async function tenantForKey(db: Db, key: string): Promise<Tenant | undefined> {
  return (await authenticateKey(db, key))?.tenant
}

/**
 * Requests the Worker builds itself for a caller it has just authenticated (an MCP tool call runs its REST
 * operation in-process), with that caller's tenant: the REST app skips a second hash-and-lookup of the same key.
 * Only code in this isolate holds these Request objects, so no client can put an entry here.
 */
export type Vouched = KeyOwner & {
  /** The MCP tool the request stands for, named in the audit log instead of the route. */
  tool?: string
}

const vouched = new WeakMap<Request, Vouched>()

/** A bare tenant stands for a full key of that tenant (in-process callers that act for the tenant itself). */
export function vouchFor<R extends Request>(request: R, caller: Vouched | Tenant): R {
  vouched.set(request, 'grant' in caller ? caller : { tenant: caller, grant: fullGrant('') })
  return request
}

/**
 * Wraps a middleware that may replace the request object (Hono's body limit does, for a streamed body) so the
 * in-process vouch follows the request it was given for.
 */
export function keepingVouch(mw: MiddlewareHandler<AppEnv>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const before = c.req.raw
    return mw(c, async () => {
      const known = vouched.get(before)
      if (known && c.req.raw !== before) vouched.set(c.req.raw, known)
      await next()
    })
  }
}

export function keyFromHeaders(headers: Headers): string | undefined {
  const auth = headers.get('authorization')
  const bearer = auth && /^Bearer\s+(.+)$/i.exec(auth.trim())?.[1]
  return bearer || headers.get('x-api-key')?.trim() || undefined
}

/**
 * Hands the request its tenant, the key's grant and the tenant's shard: the row came with the key's lookup (cached),
 * so finding the shard costs no D1 round trip.
 */
export function actAs(c: Context<AppEnv>, tenant: Tenant, grant: KeyGrant): void {
  c.set('tenant', tenant)
  c.set('key', grant)
  c.set('db', shardDb(c.env, tenant.shard))
}

export function apiKeyAuth({ allowQuery }: { allowQuery: boolean }) {
  return createMiddleware<AppEnv>(async function apiKeyAuth(c, next) {
    const known = vouched.get(c.req.raw)
    if (known) {
      actAs(c, known.tenant, known.grant)
      if (known.tool) c.set('tool', known.tool)
      return next()
    }
    const key = keyFromHeaders(c.req.raw.headers) ?? (allowQuery ? c.req.query('apiKey') : undefined)
    if (!key) throw new ApiError(401, 'unauthorized', 'An API key is required: send it as Authorization: Bearer <key> or X-API-Key')
    refuseThrottled(c)
    const owner = await authenticateKey(directory(c.env), key)
    if (!owner) return authFailed(c, new ApiError(401, 'unauthorized', 'The API key is invalid or revoked'))
    c.set('apiKeyRef', owner.ref)
    c.set('tenantKeys', owner.tenantKeys)
    // A tenant with the API switched off sees the API as absent (spec 4.1).
    if (!owner.tenant.apiEnabled) throw new ApiError(404, 'api_not_enabled', 'The API is not enabled for this account')
    actAs(c, owner.tenant, owner.grant)
    await next()
  })
}
