/**
 * Where each tenant lives, in the directory (`tenants.shard`, `placement`, `moving_to`): the lookup the public routes
 * and the Durable Objects make (an API key's lookup brings it along with the tenant row, db/api-keys.ts), the counts
 * per shard, and the writes of a move (worker/shards/move.ts). A lookup is cached per isolate for
 * PLACEMENT_CACHE_TTL_MS, like a key's: a move waits longer than that after it flips (MOVE_SETTLE_MS) before it clears
 * the old rows, and the old shard refuses every write of the tenant meanwhile (schema/d1.ts `tenant_fences`).
 */
import { and, count, eq, isNull } from 'drizzle-orm'
import { tenants } from '../../schema/d1'
import { ApiError } from '../errors'
import type { Db } from './client'
import { directory, shardDb } from './shards'

export type Placement = { shard: number; placement: number; movingTo: number | null }

export const PLACEMENT_CACHE_TTL_MS = 5_000
const CACHE_MAX_ENTRIES = 10_000

export async function tenantPlacement(dir: Db, tenantId: string): Promise<Placement | undefined> {
  return dir.select({ shard: tenants.shard, placement: tenants.placement, movingTo: tenants.movingTo }).from(tenants).where(eq(tenants.id, tenantId)).get()
}

/** Reads the tenant's placement number from the directory itself, past the cache: for cursor checks (db/cursor-maps.ts). */
export function placementReader(env: Env, tenantId: string): () => Promise<number | undefined> {
  return async () => (await tenantPlacement(directory(env), tenantId))?.placement
}

const cache = new Map<string, { placement: Placement | null; until: number }>()

export function clearPlacementCache(): void {
  cache.clear()
}

/** A tenant's placement through this isolate's short-lived cache (an unknown tenant is remembered too). */
export async function cachedPlacement(env: Env, tenantId: string, now = Date.now()): Promise<Placement | undefined> {
  const hit = cache.get(tenantId)
  if (hit && hit.until > now) return hit.placement ?? undefined
  const placement = await tenantPlacement(directory(env), tenantId)
  if (cache.size >= CACHE_MAX_ENTRIES) cache.clear()
  cache.set(tenantId, { placement: placement ?? null, until: now + PLACEMENT_CACHE_TTL_MS })
  return placement
}

/** The Drizzle handle of the shard holding `tenantId`'s rows, or undefined for a tenant the directory does not know. */
export async function tenantDb(env: Env, tenantId: string): Promise<Db | undefined> {
  const placement = await cachedPlacement(env, tenantId)
  return placement && shardDb(env, placement.shard)
}

/** How many tenants each shard holds (a shard holding none is absent). */
export async function tenantsPerShard(dir: Db): Promise<Map<number, number>> {
  const rows = await dir.select({ shard: tenants.shard, n: count() }).from(tenants).groupBy(tenants.shard)
  return new Map(rows.map((r) => [r.shard, r.n]))
}

/** Marks a move begun; false when the tenant is not on `from` any more or another move runs. */
export async function claimMove(dir: Db, tenantId: string, from: number, to: number): Promise<boolean> {
  const rows = await dir
    .update(tenants)
    .set({ movingTo: to })
    .where(and(eq(tenants.id, tenantId), eq(tenants.shard, from), isNull(tenants.movingTo)))
    .returning({ id: tenants.id })
  return rows.length > 0
}

/** The flip: the tenant now lives on `to`, in placement `placement` (its previous one plus one). */
export async function flipPlacement(dir: Db, tenantId: string, from: number, to: number, placement: number): Promise<boolean> {
  const rows = await dir
    .update(tenants)
    .set({ shard: to, placement, movingTo: null })
    .where(and(eq(tenants.id, tenantId), eq(tenants.shard, from), eq(tenants.movingTo, to)))
    .returning({ id: tenants.id })
  return rows.length > 0
}

/** A move given up before its flip: the tenant stays where it was. */
export async function releaseMove(dir: Db, tenantId: string, to: number): Promise<void> {
  await dir
    .update(tenants)
    .set({ movingTo: null })
    .where(and(eq(tenants.id, tenantId), eq(tenants.movingTo, to)))
}

/** As `tenantDb`, for a public route that cannot go on without it: a tenant the directory does not know is 404. */
export async function knownTenantDb(env: Env, tenantId: string): Promise<Db> {
  const db = await tenantDb(env, tenantId)
  if (!db) throw new ApiError(404, 'not_found', 'No such tenant')
  return db
}
