/**
 * Delivery receipts from the upstream, matched to the outbound message by its upstream id. Status only moves
 * forward (`sent` → `delivered` → `read`; a late `delivered` after `read` changes nothing); a `failed` receipt fails
 * a message that was not yet read. Each move and its `message.*` event go in one batch, the event conditional on the
 * message still being in a state the move starts from, so a repeated receipt emits nothing.
 *
 * Receipts are group-committed (the AccountDO's `c.receipts`, db/group-commit.ts): those that arrive together (a read
 * watermark covering many messages, concurrent frames) are matched in one query and moved in one D1 batch, in the
 * order they came, each seeing the moves before it.
 */
import { and, eq, inArray } from 'drizzle-orm'
import type { BatchItem } from 'drizzle-orm/batch'
import { messages, type MessageStatus } from '../../schema/d1'
import type { z } from 'zod'
import type { Receipt } from '../../schema/frames'
import { insertEventIfMessage } from '../db/events'
import { findByUpstreamIds, updateMessageStatus, type MessageWithContact } from '../db/messages'
import { messageEventFromRow } from '../events/payloads'
import type { AccountContext } from './context'
import type { AccountRef } from './storage'

/** The statuses each receipt may move a message from. */
export const RECEIPT_FROM: Record<'delivered' | 'read' | 'failed', MessageStatus[]> = {
  delivered: ['sent'],
  read: ['sent', 'delivered'],
  failed: ['queued', 'sent', 'delivered'],
}

export type ReceiptOutcome = 'applied' | 'unchanged' | 'unknown_message'

/** One receipt for the account's group commit. */
export type ReceiptJob = { ref: AccountRef; receipt: z.infer<typeof Receipt> }

/** Applies receipts of one account in order: one read for all of them, then one batch for every move. */
export async function applyReceipts(c: AccountContext, jobs: readonly ReceiptJob[]): Promise<ReceiptOutcome[]> {
  const ref = jobs[0]?.ref
  if (!ref) return []
  const ids = [...new Set(jobs.map((j) => j.receipt.upstreamId))]
  const known = new Map<string, MessageWithContact>()
  for (const row of await findByUpstreamIds(c.db, ref.tenantId, ref.accountId, 'outbound', ids)) {
    const up = row.message.upstreamId
    if (up !== null && !known.has(up)) known.set(up, row)
  }
  const now = Date.now()
  const statements: BatchItem<'sqlite'>[] = []
  const outcomes = jobs.map(({ receipt }): ReceiptOutcome => {
    const row = known.get(receipt.upstreamId)
    if (!row) return 'unknown_message'
    const from = RECEIPT_FROM[receipt.status]
    if (!from.includes(row.message.status)) return 'unchanged'
    // A failure carries its reason and the network's code (null from a relay that does not send one).
    const failure = receipt.status === 'failed' ? { errorMessage: receipt.error, errorCode: receipt.code ?? null } : {}
    const moved: MessageWithContact = { ...row, message: { ...row.message, status: receipt.status, updatedAt: now, ...failure } }
    // A later receipt of this batch for the same message starts from this move.
    known.set(receipt.upstreamId, moved)
    const movable = and(eq(messages.id, row.message.id), inArray(messages.status, from))!
    statements.push(
      insertEventIfMessage(c.db, ref.tenantId, ref.accountId, messageEventFromRow(`message.${receipt.status}`, moved, ref.channel, now), now, movable),
      updateMessageStatus(c.db, { status: receipt.status, ...failure }, now, movable)
    )
    return 'applied'
  })
  const [first, ...rest] = statements
  if (first) await c.commit([first, ...rest])
  return outcomes
}
