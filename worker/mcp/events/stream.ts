/**
 * `events/stream` (SEP-3415 push delivery) on the Streamable HTTP transport: the answer to the POST is an SSE
 * stream that confirms the subscription (`notifications/events/active`), then carries each event as
 * `notifications/events/event` with the cursor after it, and a `notifications/events/heartbeat` with the position
 * checked up to when nothing happened for HEARTBEAT_MS. Every notification names the stream by the request's id.
 *
 * Within a Worker's limits: the stream ends itself after STREAM_MAX_MS with the empty `StreamEventsResult` (a
 * Worker invocation should not hold one request, and its subrequests, forever); the client opens a new one with
 * its last cursor, exactly as after a dropped connection, and loses nothing. A client that goes away ends the loop
 * at once (the request's abort signal), which also frees the account's wait slot. A move of the tenant to another
 * shard ends it the same way: the next stream reads where the tenant then lives.
 */
import type { Notification, RequestId } from '@modelcontextprotocol/server'
import { isTenantMoving } from '../../errors'
import type { EventSubscription } from './access'
import { eventCursor, readBatch, startAfter, stillPlaced, waitForNews, wakeMark, type FeedContext } from './feed'
import type { StreamParams } from './shapes'

/** SEP-3415: a heartbeat at least every 30 s. */
export const HEARTBEAT_MS = 25_000
/** How long one stream runs before the server closes it and the client reconnects with its cursor. */
export const STREAM_MAX_MS = 5 * 60_000
const STREAM_BATCH = 50

export const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId'

export type StreamResult = { _meta: Record<string, RequestId> }

export async function streamEvents(
  c: FeedContext,
  sub: EventSubscription,
  p: StreamParams,
  stream: { id: RequestId; notify: (n: Notification) => Promise<void>; signal: AbortSignal },
  now: () => number
): Promise<StreamResult> {
  const _meta = { [SUBSCRIPTION_ID_KEY]: stream.id }
  const send = (method: string, params: Record<string, unknown>) => stream.notify({ method: `notifications/events/${method}`, params: { ...params, _meta } })
  const ends = now() + STREAM_MAX_MS
  let afterSeq = await startAfter(c, p.cursor)
  let first = true
  let quietSince = now()
  while (!stream.signal.aborted && now() < ends && (first || (await stillPlaced(c)))) {
    const mark = await wakeMark(c, sub)
    const batch = await readBatch(c, sub, afterSeq, { maxAgeMs: first ? p.maxAgeMs : undefined, limit: STREAM_BATCH, now: now() })
    // The confirmation comes first; a gap found later is announced the same way, with the fresh position.
    if (first || batch.truncated) await send('active', { cursor: eventCursor(c, first ? afterSeq : batch.afterSeq), truncated: batch.truncated })
    first = false
    for (const occurrence of batch.occurrences) await send('event', { ...occurrence })
    afterSeq = batch.afterSeq
    if (batch.occurrences.length > 0) quietSince = now()
    if (batch.hasMore) continue
    if (now() - quietSince >= HEARTBEAT_MS) {
      await send('heartbeat', { cursor: eventCursor(c, afterSeq) })
      quietSince = now()
    }
    try {
      await waitForNews(c, sub, mark, Math.min(ends, quietSince + HEARTBEAT_MS) - now(), stream.signal)
    } catch (err) {
      if (isTenantMoving(err)) break
      throw err
    }
  }
  return { _meta }
}
