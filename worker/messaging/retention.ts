/**
 * Message retention, the cron's part (docs/api.md, "Retention and archive"): each run visits a few tenants, longest
 * unvisited first, and for each deletes the messages older than its retention in bounded steps, archiving every
 * step to R2 before its delete, with the media those messages still hold and the contacts no message refers to
 * any more. A step reads a fixed window of the tenant's oldest messages, so its cost never depends on how much
 * history there is; a run does a fixed number of steps, so it stays short however far behind the deletes are.
 * The tenants to visit come from the directory, each step runs on the tenant's shard (docs/ARCHITECTURE.md, "The
 * data tier"). Nothing here wakes a Durable Object.
 */
import type { Db } from '../db/client'
import { directory, shardDb } from '../db/shards'
import type { MessageWithContact } from '../db/messages'
import { writeArchive } from '../db/message-archive'
import { oldestMessages } from '../db/messages'
import {
  deleteMediaRowsStatement,
  deleteMessagesStatement,
  markRetentionChecked,
  pruneContactsStatement,
  retentionDue,
  type RetentionTenant,
} from '../db/message-retention'
import { DAY_MS } from '../lib/time'
import { mediaKey } from '../media/ids'

/** Messages one step reads (and at most deletes). */
export const RETENTION_WINDOW = 500
/** Steps per cron run, over all tenants. */
export const RETENTION_STEPS_PER_SWEEP = 10
const TENANTS_PER_SWEEP = 20
/** A tenant whose deletes are done is looked at again this much later. */
export const RETENTION_REVISIT_MS = 60 * 60_000
/**
 * Statuses whose message is still in play, kept whatever its age: a queued send is being delivered, a held one
 * awaits its owner's decision. Both end within hours, long before any retention.
 */
const LIVE = new Set(['queued', 'awaiting_approval'])
/**
 * seq follows arrival, created_at is taken just before the insert: two accounts' messages may commit a little out
 * of time order. Before the last step a contact is judged against the deleted messages minus this margin, so a
 * later-committed message of it is never left without its contact.
 */
const COMMIT_SKEW_MS = 60_000

export type RetentionReport = { tenants: number; steps: number; archivedParts: number; deleted: number; contacts: number; media: number }

/** Messages created before this are deleted: whole UTC days, so a day is archived and deleted together. */
export function retentionCutoff(days: number, now: number): number {
  return Math.floor(now / DAY_MS) * DAY_MS - days * DAY_MS
}

type Step = { finished: boolean; archivedParts: number; deleted: number; contacts: number; media: number }

/**
 * One bounded step for one tenant: archive, then delete, the old messages among its `RETENTION_WINDOW` oldest, then
 * the contacts of `candidates` (which gains this step's) that no message refers to any more. Until the tenant's last
 * step a contact counts as done with only if its last inbound message is older than everything deleted so far
 * (messages go oldest first, so all of its inbound ones are gone); at the last step, everything before the cutoff is
 * gone, so the cutoff itself decides. A contact kept meanwhile stays a candidate for the next steps.
 */
export async function retentionStep(bucket: R2Bucket, db: Db, tenantId: string, cutoff: number, candidates = new Set<string>()): Promise<Step> {
  const window = await oldestMessages(db, tenantId, RETENTION_WINDOW)
  const old = window.filter((r) => r.message.createdAt < cutoff && !LIVE.has(r.message.status))
  // seq follows time, so a message inside the retention means every later one is too; a window of nothing but
  // live messages is left for the next visit rather than looped on.
  const finished = window.length < RETENTION_WINDOW || old.length === 0 || window.some((r) => r.message.createdAt >= cutoff)
  if (old.length === 0) return { finished, archivedParts: 0, deleted: 0, contacts: 0, media: 0 }
  const archivedParts = await writeArchive(bucket, tenantId, old)
  const withMedia = old.filter((r): r is MessageWithContact & { message: { mediaId: string } } => r.message.mediaId !== null)
  // Media goes with its message (or earlier, at MEDIA_RETENTION_DAYS): the object first, then its row, as media/retention.ts does.
  if (withMedia.length > 0) await bucket.delete(withMedia.map((r) => mediaKey(tenantId, r.message.accountId, r.message.mediaId)))
  for (const r of old) candidates.add(r.message.contactId)
  const inboundBefore = finished ? cutoff : Math.max(...old.map((r) => r.message.createdAt)) - COMMIT_SKEW_MS
  const [, , pruned] = await db.batch([
    deleteMessagesStatement(
      db,
      old.map((r) => r.message.seq)
    ),
    deleteMediaRowsStatement(
      db,
      withMedia.map((r) => r.message.mediaId)
    ),
    pruneContactsStatement(db, tenantId, [...candidates], cutoff, inboundBefore),
  ])
  for (const c of pruned) candidates.delete(c.id)
  return { finished, archivedParts, deleted: old.length, contacts: pruned.length, media: withMedia.length }
}

/** The cron's retention run. */
export async function sweepRetention(env: Env, now: number): Promise<RetentionReport> {
  const report: RetentionReport = { tenants: 0, steps: 0, archivedParts: 0, deleted: 0, contacts: 0, media: 0 }
  const dir = directory(env)
  const due = await retentionDue(dir, now - RETENTION_REVISIT_MS, TENANTS_PER_SWEEP)
  for (const tenant of due) {
    if (report.steps >= RETENTION_STEPS_PER_SWEEP) break
    report.tenants++
    const finished = await sweepTenant(env.MEDIA, shardDb(env, tenant.shard), tenant, now, report)
    // A tenant not finished is due again at once, behind those that waited longer.
    await markRetentionChecked(dir, tenant.id, finished ? now : now - RETENTION_REVISIT_MS - 1)
  }
  return report
}

async function sweepTenant(bucket: R2Bucket, db: Db, tenant: RetentionTenant, now: number, report: RetentionReport): Promise<boolean> {
  if (tenant.retentionDays === 0) return true
  const cutoff = retentionCutoff(tenant.retentionDays, now)
  // A visit cut short by the run's step budget forgets its kept candidates: such a contact stays (a row, no harm).
  const candidates = new Set<string>()
  while (report.steps < RETENTION_STEPS_PER_SWEEP) {
    report.steps++
    const step = await retentionStep(bucket, db, tenant.id, cutoff, candidates)
    report.archivedParts += step.archivedParts
    report.deleted += step.deleted
    report.contacts += step.contacts
    report.media += step.media
    if (step.finished) return true
  }
  return false
}
