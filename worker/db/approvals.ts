/**
 * Held sends (status `awaiting_approval`, docs/agent-safety.md): the approval row says which key held the message
 * and until when it may be decided; deciding is one conditional update, so exactly one of approve, reject and
 * expiry wins.
 */
import { and, eq, isNull, lte } from 'drizzle-orm'
import { messageApprovals, messages } from '../../schema/d1'
import { insertEventIfMessage } from './events'
import { updateMessageStatus } from './messages'
import type { Db } from './client'
import { unfenced } from './fences'
import type { MessageEvent } from '../../schema/events'

export type ApprovalRow = typeof messageApprovals.$inferSelect
export type Decision = NonNullable<ApprovalRow['decision']>

export function insertApproval(db: Db, row: typeof messageApprovals.$inferInsert) {
  return db.insert(messageApprovals).values(row)
}

export async function getApproval(db: Db, tenantId: string, messageId: string): Promise<ApprovalRow | undefined> {
  return db
    .select()
    .from(messageApprovals)
    .where(and(eq(messageApprovals.tenantId, tenantId), eq(messageApprovals.messageId, messageId)))
    .get()
}

/** Claims the decision; answers the row when this call decided it, undefined when it was already decided. */
export async function claimDecision(db: Db, tenantId: string, messageId: string, decision: Decision, now: number): Promise<ApprovalRow | undefined> {
  const [row] = await db
    .update(messageApprovals)
    .set({ decision, decidedAt: now })
    .where(and(eq(messageApprovals.tenantId, tenantId), eq(messageApprovals.messageId, messageId), isNull(messageApprovals.decidedAt)))
    .returning()
  return row
}

/** Open approvals past their expiry, oldest first (the cron's expiry sweep). */
export async function dueApprovals(db: Db, now: number, limit: number): Promise<ApprovalRow[]> {
  return db
    .select()
    .from(messageApprovals)
    .where(and(isNull(messageApprovals.decidedAt), lte(messageApprovals.expiresAt, now), unfenced(messageApprovals.tenantId)))
    .orderBy(messageApprovals.expiresAt)
    .limit(limit)
    .all()
}

/** A held message fails with `reason` (and its message.failed event), only if it is still held. */
export function failHeldMessage(db: Db, tenantId: string, accountId: string, messageId: string, reason: string, event: MessageEvent, now: number) {
  const held = and(eq(messages.id, messageId), eq(messages.status, 'awaiting_approval'))!
  const failed = and(eq(messages.id, messageId), eq(messages.status, 'failed'), eq(messages.errorMessage, reason))!
  return [
    updateMessageStatus(db, { status: 'failed', errorCode: null, errorMessage: reason }, now, held),
    insertEventIfMessage(db, tenantId, accountId, event, now, failed),
  ] as const
}

/**
 * A held message that was approved and passed every limit becomes an ordinary queued send, timed from now: the
 * delivery windows (a relay's 10 minutes) count from when it was queued, not from when the agent asked.
 */
export function releaseHeldMessage(db: Db, messageId: string, now: number) {
  return db
    .update(messages)
    .set({ status: 'queued', createdAt: now, updatedAt: now })
    .where(and(eq(messages.id, messageId), eq(messages.status, 'awaiting_approval')))
}
