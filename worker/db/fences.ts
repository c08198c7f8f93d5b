/**
 * The fence of a tenant being moved (schema/d1.ts `tenant_fences`, enforced by the triggers of the shards migration):
 * setting and clearing it, and the SQL that keeps the cron's work across tenants off fenced tenants' rows. A write of a
 * fenced tenant fails inside D1 with `tenant_moving` (errors.ts TENANT_MOVING: answered 503 with Retry-After),
 * whatever placement its writer thought current, so nothing is written where the move would lose it.
 */
import { and, eq, sql, type SQL } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'
import { tenantFences, type FenceState } from '../../schema/d1'
import type { Db } from './client'

/** Sets (or moves on) a tenant's fence on one shard. */
export function setFence(db: Db, tenantId: string, state: FenceState, moveId: string, now: number) {
  return db
    .insert(tenantFences)
    .values({ tenantId, state, moveId, at: now })
    .onConflictDoUpdate({ target: tenantFences.tenantId, set: { state, moveId, at: now } })
}

/** Lifts the fence a move set (only that move's: a later move's fence stays). */
export function clearFence(db: Db, tenantId: string, moveId: string) {
  return db.delete(tenantFences).where(and(eq(tenantFences.tenantId, tenantId), eq(tenantFences.moveId, moveId)))
}

/**
 * SQL: the row's tenant has no fence on this shard. The cron's pruning across tenants keeps to these: a tenant
 * leaving must not lose rows after they were copied, one arriving must not lose rows before the copy is checked.
 */
export function unfenced(tenantId: SQLiteColumn): SQL {
  return sql`${tenantId} not in (select ${tenantFences.tenantId} from ${tenantFences})`
}

/**
 * SQL: the row's tenant lives on this shard: not a copy still arriving, not the rows a move is clearing after it
 * left. For figures summed over shards, which would count a moving tenant twice.
 */
export function livesHere(tenantId: SQLiteColumn): SQL {
  return sql`${tenantId} not in (select ${tenantFences.tenantId} from ${tenantFences} where ${tenantFences.state} <> 'leaving')`
}
