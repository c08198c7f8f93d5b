/**
 * `events/poll` (SEP-3415 poll delivery): what came after the cursor, held open until something does or the timeout
 * passes, like GET /v1/messages/wait. Events go out only in the answer, never as notifications. A move of the tenant
 * to another shard answers a held poll at once with the position reached; the next poll goes to the new shard.
 */
import { isTenantMoving } from '../../errors'
import type { EventSubscription } from './access'
import { eventCursor, readBatch, startAfter, waitForNews, wakeMark, type FeedContext } from './feed'
import type { EventOccurrence, PollParams } from './shapes'

/** Held this long when the client names no `timeoutMs`. */
export const POLL_DEFAULT_TIMEOUT_MS = 25_000
export const POLL_DEFAULT_MAX_EVENTS = 50
/** The pause SEP-3415 clients keep between polls; the held poll itself is the wait. */
export const NEXT_POLL_MS = 1_000

export type PollResult = { events: EventOccurrence[]; cursor: string; truncated: boolean; hasMore: boolean; nextPollMs: number }

export async function pollEvents(c: FeedContext, sub: EventSubscription, p: PollParams, signal: AbortSignal, now: () => number): Promise<PollResult> {
  const deadline = now() + (p.timeoutMs ?? POLL_DEFAULT_TIMEOUT_MS)
  const limit = p.maxEvents ?? POLL_DEFAULT_MAX_EVENTS
  // Without a cursor the poll starts from now and answers at once: the client has nothing to resume yet.
  const fresh = p.cursor === undefined || p.cursor === null
  let afterSeq = await startAfter(c, p.cursor)
  let truncated = false
  for (;;) {
    const mark = await wakeMark(c, sub)
    const batch = await readBatch(c, sub, afterSeq, { maxAgeMs: p.maxAgeMs, limit, now: now() })
    truncated ||= batch.truncated
    afterSeq = batch.afterSeq
    const left = deadline - now()
    // Poll carries the cursor at the answer's level only (SEP-3415).
    const answer = () => ({
      events: batch.occurrences.map(({ cursor: _cursor, ...o }) => o),
      cursor: eventCursor(c, afterSeq),
      truncated,
      hasMore: batch.hasMore,
      nextPollMs: NEXT_POLL_MS,
    })
    if (fresh || batch.occurrences.length > 0 || left <= 0 || signal.aborted) return answer()
    try {
      await waitForNews(c, sub, mark, left, signal)
    } catch (err) {
      if (isTenantMoving(err)) return answer()
      throw err
    }
  }
}
