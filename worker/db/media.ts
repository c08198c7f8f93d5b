/** Media store rows (schema/d1.ts `media`): written after the object is whole, read by links and GET /v1/media. */
import { and, asc, eq, lt } from 'drizzle-orm'
import { media } from '../../schema/d1'
import type { Db } from './client'
import { unfenced } from './fences'
import { inJsonList } from './json-list'

export type MediaRow = typeof media.$inferSelect

export async function getMedia(db: Db, id: string): Promise<MediaRow | undefined> {
  return db.select().from(media).where(eq(media.id, id)).get()
}

/** Idempotent: an upload repeated after a relay crash writes the same row again. */
export async function upsertMedia(db: Db, row: MediaRow): Promise<void> {
  const { id, ...rest } = row
  await db.insert(media).values(row).onConflictDoUpdate({ target: media.id, set: rest })
}

/** The oldest items created before `before`, for the retention sweep. */
export async function mediaCreatedBefore(db: Db, before: number, limit: number): Promise<MediaRow[]> {
  return db
    .select()
    .from(media)
    .where(and(lt(media.createdAt, before), unfenced(media.tenantId)))
    .orderBy(asc(media.createdAt))
    .limit(limit)
}

export async function mediaOfAccount(db: Db, tenantId: string, accountId: string, limit: number): Promise<MediaRow[]> {
  return db
    .select()
    .from(media)
    .where(and(eq(media.tenantId, tenantId), eq(media.accountId, accountId)))
    .limit(limit)
}

/** The ids travel as one parameter (db/json-list.ts): a sweep page is 500, D1 binds at most 100. */
export async function deleteMediaRows(db: Db, ids: string[]): Promise<void> {
  if (ids.length > 0) await db.delete(media).where(inJsonList(media.id, ids))
}
