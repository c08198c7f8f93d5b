/**
 * Retention and removal: deletes items older than the retention period (the minute cron calls it; it reads one
 * indexed page of D1 and touches nothing when there is nothing to delete, so an idle account costs nothing), and all
 * items of a removed account. The object goes before its row, so a row never outlives a deletion that failed midway
 * unnoticed: the next sweep finds it again.
 */
import type { Db } from '../db/client'
import { deleteMediaRows, mediaCreatedBefore, mediaOfAccount } from '../db/media'
import { accountPrefix, mediaKey } from './ids'

/** R2 deletes up to 1000 keys per call; one sweep does one page so a cron run stays short. */
export const MEDIA_SWEEP_PAGE = 500

export async function sweepExpiredMedia(bucket: R2Bucket, db: Db, retentionMs: number, now: number): Promise<number> {
  const rows = await mediaCreatedBefore(db, now - retentionMs, MEDIA_SWEEP_PAGE)
  if (rows.length === 0) return 0
  await bucket.delete(rows.map((r) => mediaKey(r.tenantId, r.accountId, r.id)))
  await deleteMediaRows(
    db,
    rows.map((r) => r.id)
  )
  return rows.length
}

/** Everything of one account: the rows and whatever is under its prefix (an upload whose row was never written). */
export async function removeAccountMedia(bucket: R2Bucket, db: Db, tenantId: string, accountId: string): Promise<number> {
  let removed = 0
  for (;;) {
    const rows = await mediaOfAccount(db, tenantId, accountId, MEDIA_SWEEP_PAGE)
    if (rows.length === 0) break
    await bucket.delete(rows.map((r) => mediaKey(r.tenantId, r.accountId, r.id)))
    await deleteMediaRows(
      db,
      rows.map((r) => r.id)
    )
    removed += rows.length
  }
  let cursor: string | undefined
  do {
    const page = await bucket.list({ prefix: accountPrefix(tenantId, accountId), cursor })
    if (page.objects.length > 0) await bucket.delete(page.objects.map((o) => o.key))
    cursor = page.truncated ? page.cursor : undefined
  } while (cursor)
  return removed
}
