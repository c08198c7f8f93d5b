/**
 * The agent-safety part of the once-a-minute cron: held messages whose approval expired fail, and audit entries
 * past AUDIT_RETENTION_MS are deleted in bounded chunks. Both are D1 statements across tenants, so no idle
 * account's Durable Object is woken for them. Here with the approvals it expires (messaging/approvals.ts).
 */
import { pruneAudit } from '../db/audit'
import type { Db } from '../db/client'
import { AUDIT_RETENTION_MS } from '../safety/audit-note'
import { expireApprovals } from './approvals'

const PRUNE_CHUNK = 500
const PRUNE_CHUNKS_PER_SWEEP = 10

export type SafetySweep = { expiredApprovals: number; prunedAudit: number }

export async function sweepSafety(env: Env, db: Db, now: number): Promise<SafetySweep> {
  const expiredApprovals = await expireApprovals(env, db, now)
  let prunedAudit = 0
  for (let i = 0; i < PRUNE_CHUNKS_PER_SWEEP; i++) {
    const n = await pruneAudit(db, now - AUDIT_RETENTION_MS, PRUNE_CHUNK)
    prunedAudit += n
    if (n < PRUNE_CHUNK) break
  }
  return { expiredApprovals, prunedAudit }
}
