/**
 * Retention for append-only logs (events, webhook deliveries): deletes the oldest rows in chunks so one run stays
 * short, across the tenants of one shard but a moving one (db/fences.ts `unfenced`).
 */
import { and, inArray, lt } from 'drizzle-orm'
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core'
import type { Db } from './client'
import { unfenced } from './fences'

/** Deletes up to `limit` rows of `table` created before `before`; answers how many went. */
export async function pruneOlderThan(
  db: Db,
  table: SQLiteTable,
  columns: { id: SQLiteColumn; tenantId: SQLiteColumn; createdAt: SQLiteColumn },
  before: number,
  limit: number
): Promise<number> {
  const oldest = db
    .select({ id: columns.id })
    .from(table)
    .where(and(lt(columns.createdAt, before), unfenced(columns.tenantId)))
    .limit(limit)
  const rows = await db.delete(table).where(inArray(columns.id, oldest)).returning({ id: columns.id })
  return rows.length
}
