/** The audit log (docs/agent-safety.md): one row per action taken with a key, newest first by `seq`. */
import { and, desc, eq, inArray, lt, type SQL } from 'drizzle-orm'
import { auditLog, type AuditOutcome } from '../../schema/d1'
import type { Db } from './client'
import { unfenced } from './fences'

export type AuditRow = typeof auditLog.$inferSelect
export type AuditEntry = Omit<AuditRow, 'seq'>

export function auditInsert(db: Db, entry: AuditEntry) {
  return db.insert(auditLog).values(entry)
}

export type AuditFilter = { tenantId: string; keyId?: string; accountId?: string; outcome?: AuditOutcome; beforeSeq?: number; limit: number }

/** A page of entries, newest first; `more` says whether another page exists. */
export async function listAudit(db: Db, f: AuditFilter): Promise<{ rows: AuditRow[]; more: boolean }> {
  const where: SQL[] = [eq(auditLog.tenantId, f.tenantId)]
  if (f.keyId !== undefined) where.push(eq(auditLog.keyId, f.keyId))
  if (f.accountId !== undefined) where.push(eq(auditLog.accountId, f.accountId))
  if (f.outcome !== undefined) where.push(eq(auditLog.outcome, f.outcome))
  if (f.beforeSeq !== undefined) where.push(lt(auditLog.seq, f.beforeSeq))
  const rows = await db
    .select()
    .from(auditLog)
    .where(and(...where))
    .orderBy(desc(auditLog.seq))
    .limit(f.limit + 1)
    .all()
  return { rows: rows.slice(0, f.limit), more: rows.length > f.limit }
}

/** Deletes up to `limit` entries older than `before` across the shard's tenants but a moving one (the retention sweep); answers how many. */
export async function pruneAudit(db: Db, before: number, limit: number): Promise<number> {
  const rows = await db
    .delete(auditLog)
    .where(
      inArray(
        auditLog.seq,
        db
          .select({ seq: auditLog.seq })
          .from(auditLog)
          .where(and(lt(auditLog.createdAt, before), unfenced(auditLog.tenantId)))
          .limit(limit)
      )
    )
    .returning({ seq: auditLog.seq })
  return rows.length
}
