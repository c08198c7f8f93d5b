/**
 * The one reader behind `events/poll` and `events/stream`: a subscription's events in commit order after a cursor
 * (the event outbox's `seq`, read in one D1 batch with the head, so no event is skipped or handed out twice), and
 * the wait for the next one. `message.received` wakes the way GET /v1/messages/wait does (the accounts' Durable
 * Objects push the wakeup; the message and its event commit in one batch, so the event is there when the wait
 * returns); other events, which no object announces, are checked again every EVENTS_RECHECK_MS.
 */
import { filterText } from '../../db/event-filter'
import { headSeq, readFeed } from '../../db/event-feed'
import { listAccounts } from '../../db/accounts'
import type { Db } from '../../db/client'
import { latestSeq } from '../../db/messages'
import { cachedPlacement, placementReader } from '../../db/placement'
import { isTenantMoving } from '../../errors'
import { seqHere } from '../../db/cursor-maps'
import { decodeCursor, encodeCursor } from '../../lib/cursor'
import { iso } from '../../lib/time'
import { mediaSigner, signPayload } from '../../media/links-for'
import { waitForInbound } from '../../messaging/wait'
import type { EventSubscription } from './access'
import { invalidParams } from './errors'
import type { EventOccurrence } from './shapes'

/** How often events that nothing announces are looked for while a poll or stream waits. */
export const EVENTS_RECHECK_MS = 2_000

/** `placement`: the tenant's, which event cursors count in (db/cursor-maps.ts). */
export type FeedContext = { env: Env; db: Db; tenantId: string; placement: number }

/**
 * Whether the tenant still lives where this poll or stream began reading (the isolate's cached placement, so no D1
 * read each time): a stream ends when a move begins, and its client resumes with its cursor on the new shard.
 */
export async function stillPlaced(c: FeedContext): Promise<boolean> {
  const now = await cachedPlacement(c.env, c.tenantId)
  return now !== undefined && now.placement === c.placement && now.movingTo === null
}

/** An event cursor at `seq` of the tenant's current placement. */
export function eventCursor(c: Pick<FeedContext, 'placement'>, seq: number): string {
  return encodeCursor('event', seq, c.placement)
}

/** An event cursor's position in the tenant's current placement, or an `invalidParams` error for what is not one. */
export async function eventSeq(c: Pick<FeedContext, 'env' | 'db' | 'tenantId' | 'placement'>, cursor: string, message: string): Promise<number> {
  const at = decodeCursor('event', cursor)
  if (at === null) throw invalidParams(message)
  const unknown = { placedAt: placementReader(c.env, c.tenantId), refuse: () => invalidParams(message) }
  return seqHere(c.db, { id: c.tenantId, placement: c.placement }, 'events', at, 'after', unknown)
}

export type Batch = {
  occurrences: EventOccurrence[]
  /** The position after this batch: its last event, or the head when it drained everything. */
  afterSeq: number
  hasMore: boolean
  /** Events between the old position and this batch are gone (7-day retention) or older than `maxAgeMs`. */
  truncated: boolean
}

/** The position a cursor names; no cursor means now (SEP-3415: no replay without one). */
export async function startAfter(c: FeedContext, cursor: string | null | undefined): Promise<number> {
  if (cursor === undefined || cursor === null) return headSeq(c.db)
  return eventSeq(c, cursor, 'cursor: not a cursor this server returned for events')
}

export async function readBatch(
  c: FeedContext,
  sub: EventSubscription,
  afterSeq: number,
  opts: { maxAgeMs?: number; limit: number; now: number }
): Promise<Batch> {
  const read = await readFeed(c.db, {
    tenantId: c.tenantId,
    type: sub.type,
    afterSeq,
    filter: filterText(sub.filter),
    notBefore: opts.maxAgeMs === undefined ? 0 : opts.now - opts.maxAgeMs,
    limit: opts.limit,
  })
  const sign = mediaSigner(c.env, c.tenantId, opts.now)
  const occurrences: EventOccurrence[] = []
  for (const row of read.rows) {
    const data: unknown = JSON.parse(await signPayload(sign, row.payload))
    occurrences.push({ eventId: row.id, name: row.type, timestamp: iso(row.createdAt), data, cursor: eventCursor(c, row.seq) })
  }
  const hasMore = read.rows.length === opts.limit
  const last = read.rows.at(-1)?.seq
  const pruned = read.oldestSeq !== null && read.oldestSeq > afterSeq + 1
  return {
    occurrences,
    afterSeq: hasMore && last !== undefined ? last : Math.max(afterSeq, read.headSeq),
    hasMore,
    truncated: read.skippedOld || pruned,
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const done = () => (clearTimeout(timer), signal.removeEventListener('abort', done), resolve())
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}

/**
 * The tenant's newest message position, read before a batch: a message committed after it ends the wait at once,
 * one committed before it is already in the batch. Only `message.received` waits this way.
 */
export async function wakeMark(c: FeedContext, sub: EventSubscription): Promise<number | null> {
  return sub.type === 'message.received' ? latestSeq(c.db, c.tenantId) : null
}

/**
 * Waits up to `ms` for news: an inbound message after `mark` on the subscription's accounts (the REST wait's
 * wakeup, which takes one of an account's 2 wait slots), or one recheck interval for everything else. When the
 * slots are taken, or the tenant has no account yet, it falls back to the recheck interval.
 */
export async function waitForNews(c: FeedContext, sub: EventSubscription, mark: number | null, ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return
  if (mark !== null) {
    const wanted = sub.filter?.account_ids
    const targets = (await listAccounts(c.db, c.tenantId)).filter((a) => !wanted || wanted.includes(a.id))
    if (targets.length > 0) {
      try {
        await waitForInbound(c.env, c.db, { tenantId: c.tenantId, placement: c.placement }, targets, mark, ms, signal)
        return
      } catch (err) {
        if (signal.aborted) return
        // The tenant began moving: the caller ends its poll or stream, and the client resumes with its cursor.
        if (isTenantMoving(err)) throw err
        console.warn(JSON.stringify({ msg: 'mcp events wait fell back to rechecks', error: String(err) }))
      }
    }
  }
  await sleep(Math.min(ms, EVENTS_RECHECK_MS), signal)
}
