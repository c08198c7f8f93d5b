/**
 * Delivery receipts from the upstream, matched to the outbound message by its upstream id. Status only moves
 * forward (`sent` → `delivered` → `read`; a late `delivered` after `read` changes nothing); a `failed` receipt fails
 * a message that was not yet read. Each move and its `message.*` event are one batch, the event conditional on the
 * message still being in a state the move starts from, so a repeated receipt emits nothing.
 */
import { and, eq, inArray } from 'drizzle-orm'
import { messages, type MessageStatus } from '../../schema/d1'
import type { z } from 'zod'
import type { Receipt } from '../../schema/frames'
import { insertEventIfMessage } from '../db/events'
import { findByUpstreamId, updateMessageStatus, type MessageWithContact } from '../db/messages'
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

export async function applyReceipt(c: AccountContext, ref: AccountRef, receipt: z.infer<typeof Receipt>): Promise<ReceiptOutcome> {
  const row = await findByUpstreamId(c.db, ref.tenantId, ref.accountId, 'outbound', receipt.upstreamId)
  if (!row) return 'unknown_message'
  const found = row.message
  const from = RECEIPT_FROM[receipt.status]
  if (!from.includes(found.status)) return 'unchanged'
  const now = Date.now()
  const error = receipt.status === 'failed' ? receipt.error : null
  const moved: MessageWithContact = {
    ...row,
    message: { ...row.message, status: receipt.status, updatedAt: now, ...(error !== null ? { errorMessage: error } : {}) },
  }
  const movable = and(eq(messages.id, found.id), inArray(messages.status, from))!
  await c.commit([
    insertEventIfMessage(c.db, ref.tenantId, ref.accountId, messageEventFromRow(`message.${receipt.status}`, moved, ref.channel, now), now, movable),
    updateMessageStatus(c.db, { status: receipt.status, ...(error !== null ? { errorMessage: error } : {}) }, now, movable),
  ])
  return 'applied'
}
