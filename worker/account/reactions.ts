/**
 * Reactions on a message inside the AccountDO (issue 25): a person's reaction (from a relay frame, a page-inbox
 * webhook or a custom bridge's push) lands on the message it names and writes `message.reaction`; the account's own
 * reaction (after the network took it) lands on the message as `me`, with no event. In a 1:1 chat the person who
 * reacts is the message's contact. One batch: the event (only when the reaction changes what is stored, so a resent
 * frame writes no second event), then the merge.
 */
import { and, eq } from 'drizzle-orm'
import { messages } from '../../schema/d1'
import { insertEventIfMessage } from '../db/events'
import { findByUpstreamIdAnyDirection, getMessage, type MessageWithContact } from '../db/messages'
import { mergeReaction, reactionChanges } from '../db/reactions'
import { reactionEventPayload } from '../events/payloads'
import type { AccountContext } from './context'
import type { AccountRef } from './storage'

/** The account's own reactions are stored under this sender. */
export const OWN_REACTION = 'me'

/**
 * A reaction to a message, named by the id the network knows it by (or, from a custom bridge, by ours); `emoji` '' or
 * null takes it back. Ignored for a message never stored.
 */
export type ReactionInput = ({ upstreamId: string } | { messageId: string }) & { emoji: string | null; at: number }

/** Answers the id of the message the reaction landed on, or null for a message never stored. */
export async function receiveReaction(c: AccountContext, ref: AccountRef, r: ReactionInput): Promise<string | null> {
  c.store.setRef(ref)
  const row =
    'upstreamId' in r ? await findByUpstreamIdAnyDirection(c.db, ref.tenantId, ref.accountId, r.upstreamId) : await getMessage(c.db, ref.tenantId, r.messageId)
  if (!row || row.message.accountId !== ref.accountId) return null
  await applyReaction(c, ref, row, { from: row.message.contactId, emoji: r.emoji || null, at: r.at }, true)
  return row.message.id
}

export async function applyReaction(
  c: AccountContext,
  ref: AccountRef,
  row: MessageWithContact,
  r: { from: string; emoji: string | null; at: number },
  emit: boolean
): Promise<void> {
  const now = Date.now()
  const merge = mergeReaction(c.db, ref.tenantId, row.message.id, r)
  if (!emit) {
    await c.commit([merge])
    return
  }
  const event = insertEventIfMessage(
    c.db,
    ref.tenantId,
    ref.accountId,
    reactionEventPayload(row, ref.channel, r, now),
    now,
    and(eq(messages.id, row.message.id), reactionChanges(r.from, r.emoji))!
  )
  await c.commit([event, merge])
}
