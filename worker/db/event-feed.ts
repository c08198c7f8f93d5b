/**
 * Reading the event outbox in commit order for MCP `events/poll` and `events/stream`: the events of one type after a
 * position (`events.seq`), narrowed by a subscription filter, and the head position. Run in one D1 batch (one
 * transaction), an empty answer and the head describe the same moment, so a reader that resumes after the head
 * neither skips an event committed meanwhile nor sees one twice.
 */
import { and, asc, eq, gt, gte, inArray, isNull, lt, ne, sql } from 'drizzle-orm'
import { events, webhookDeliveries } from '../../schema/d1'
import type { Db } from './client'
import type { EventRow } from './events'
import { passesFilter } from './event-filter'

export type FeedQuery = {
  tenantId: string
  type: string
  afterSeq: number
  /** Filter JSON text (db/event-filter.ts), null for none. */
  filter: string | null
  /** Events created before this time (ms) are left out (SEP-3415 `maxAgeMs`). */
  notBefore: number
  limit: number
}

function matching(q: Pick<FeedQuery, 'tenantId' | 'type' | 'afterSeq' | 'filter'>) {
  return and(eq(events.tenantId, q.tenantId), gt(events.seq, q.afterSeq), eq(events.type, q.type), passesFilter(sql`${q.filter}`))
}

export type FeedRead = { rows: EventRow[]; headSeq: number; oldestSeq: number | null; skippedOld: boolean }

/**
 * The next events after `afterSeq` (at most `limit`, oldest first), the newest position of the whole outbox, its
 * oldest retained position (the retention sweep deletes older ones), and whether matching events older than
 * `notBefore` were passed over.
 */
export async function readFeed(db: Db, q: FeedQuery): Promise<FeedRead> {
  const [rows, [bounds], skipped] = await db.batch([
    db
      .select()
      .from(events)
      .where(and(matching(q), gte(events.createdAt, q.notBefore)))
      .orderBy(asc(events.seq))
      .limit(q.limit),
    // Two subqueries, not max() and min() in one select: SQLite answers each alone from the end of the rowid, both
    // together only by reading every event (issue 22 §3, test/worker/db/query-plans.test.ts).
    db
      .select({ head: sql<number | null>`(select max(${events.seq}) from ${events})`, oldest: sql<number | null>`(select min(${events.seq}) from ${events})` })
      .from(sql`(select 1)`),
    db
      .select({ seq: events.seq })
      .from(events)
      .where(and(matching(q), lt(events.createdAt, q.notBefore)))
      .limit(1),
  ])
  return { rows, headSeq: bounds?.head ?? 0, oldestSeq: bounds?.oldest ?? null, skippedOld: skipped.length > 0 }
}

/** The newest position of the outbox (0 when empty): where a subscription without a cursor starts. */
export async function headSeq(db: Db): Promise<number> {
  const row = await db
    .select({ head: sql<number | null>`max(${events.seq})` })
    .from(events)
    .get()
  return row?.head ?? 0
}

/**
 * The safe-to-persist position for one webhook subscription (SEP-3415 webhook `cursor`): every event at or before
 * it was delivered, abandoned or skipped for this subscription. A delivery still pending or paused holds it back,
 * and so does any event of the tenant not yet fanned out (it may become a delivery); with neither, it is the head.
 * The event being delivered (`sending`) does not hold back its own body's cursor: the receiver sees that cursor
 * only in the body it accepts, and a body it refuses is tried again.
 */
export async function deliveryWatermark(db: Db, tenantId: string, webhookId: string, sending?: string): Promise<number> {
  const d = webhookDeliveries
  const e = events
  const lowest = sql<number | null>`min(${e.seq})`
  const [[delivering], [undispatched], [head]] = await db.batch([
    db
      .select({ seq: lowest })
      .from(d)
      .innerJoin(e, eq(e.id, d.eventId))
      .where(
        and(
          eq(d.tenantId, tenantId),
          eq(d.webhookId, webhookId),
          inArray(d.status, ['pending', 'paused']),
          sending === undefined ? undefined : ne(d.eventId, sending)
        )
      ),
    db
      .select({ seq: lowest })
      .from(e)
      .where(and(eq(e.tenantId, tenantId), isNull(e.dispatchedAt))),
    db.select({ seq: sql<number | null>`max(${e.seq})` }).from(e),
  ])
  const held = [delivering?.seq, undispatched?.seq].filter((s): s is number => typeof s === 'number')
  return held.length > 0 ? Math.min(...held) - 1 : (head?.seq ?? 0)
}
