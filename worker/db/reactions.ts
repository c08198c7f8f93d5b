/**
 * Reactions on a message (issue 25): `messages.reactions` holds a JSON array of `{emoji, from, at}`, the latest of each
 * sender. The merge is one UPDATE computed by SQL from the stored array, so two reactions landing together both stay;
 * `reactionChanges` is the condition under which the change is news (for the event written beside it, ahead of the
 * merge in the same batch, so it sees the array before): a reaction not already there, or a removal of one that is.
 */
import { and, eq, sql, type SQL } from 'drizzle-orm'
import { z } from 'zod'
import { messages } from '../../schema/d1'
import type { Db } from './client'

export type StoredReaction = { emoji: string; from: string; at: number }

const Stored = z.array(z.object({ emoji: z.string(), from: z.string(), at: z.number() }))

/** The stored array, oldest first; an unreadable value reads as none. */
export function parseReactions(text: string | null): StoredReaction[] {
  if (!text) return []
  try {
    const parsed = Stored.safeParse(JSON.parse(text))
    return parsed.success ? parsed.data : []
  } catch {
    return []
  }
}

const elements = sql`json_each(coalesce(${messages.reactions}, '[]'))`

/** A change by `from`: `emoji` null takes their reaction back. True when it changes what is stored. */
export function reactionChanges(from: string, emoji: string | null): SQL {
  const theirs = sql`select 1 from ${elements} where json_extract(value, '$.from') = ${from}`
  if (emoji === null) return sql`exists (${theirs})`
  return sql`not exists (${theirs} and json_extract(value, '$.emoji') = ${emoji})`
}

/** Sets (or, with `emoji` null, removes) `from`'s reaction on the message; the others stay as they are. */
export function mergeReaction(db: Db, tenantId: string, messageId: string, r: { from: string; emoji: string | null; at: number }) {
  const kept = sql`select value from ${elements} where json_extract(value, '$.from') <> ${r.from}`
  const added = r.emoji === null ? sql`` : sql` union all select json_object('emoji', ${r.emoji}, 'from', ${r.from}, 'at', ${r.at})`
  const merged = sql`(select case when count(*) = 0 then null else json_group_array(json(value)) end from (${kept}${added}))`
  return db
    .update(messages)
    .set({ reactions: merged })
    .where(and(eq(messages.tenantId, tenantId), eq(messages.id, messageId)))
}
