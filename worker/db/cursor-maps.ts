/**
 * Cursors across moves (docs/ARCHITECTURE.md, "Moving a tenant"). `messages.seq`, `events.seq` and `audit_log.seq`
 * are AUTOINCREMENT numbers of one database, so a moved tenant's rows cannot keep theirs: the target's own tenants
 * hold those numbers. The move copies the rows in their order, a batch at a time, and stores each batch at its old
 * numbers plus one `delta` chosen above everything the target has used, recording (old first, old last, delta) here.
 * Inside a batch the old gaps are kept, between batches the numbers only grow, and rows written after the move come
 * later still, so the tenant's order is the same in both placements and this map says exactly where any old
 * position lies in the new one:
 *   - a number inside a batch's old range is that number + delta (a row, or the gap it fell in);
 *   - a number between two batches lies after the first batch's last row: `after` it means after that row,
 *     `before` it means up to and including that row;
 *   - a number before the first batch lies before every row.
 * So a wait cursor still means "after this message" and a list cursor "before this message", and the `seq` order a
 * client sees stays gap-free. A cursor from several moves back goes through each move's map in turn.
 */
import { and, desc, eq, lte } from 'drizzle-orm'
import { cursorMaps, type CursorMapKind } from '../../schema/d1'
import { tenantMovingError } from '../errors'
import type { Position } from '../lib/cursor'
import type { Db } from './client'

/** A cursor that names the rows after its position (a wait, the events feed) or before it (a list, the audit log). */
export type Side = 'after' | 'before'

/** One batch's old range and how far it moved (pure: tested without D1). */
export type Segment = { oldFirst: number; oldLast: number; delta: number }

/** Where `seq` of the previous placement lies in the next, given the last batch that starts at or before it. */
export function mapThrough(segment: Segment | undefined, seq: number, side: Side): number {
  if (!segment) return 0
  if (seq <= segment.oldLast) return seq + segment.delta
  return side === 'after' ? segment.oldLast + segment.delta : segment.oldLast + segment.delta + 1
}

async function segmentAt(db: Db, tenantId: string, kind: CursorMapKind, placement: number, seq: number): Promise<Segment | undefined> {
  return db
    .select({ oldFirst: cursorMaps.oldFirst, oldLast: cursorMaps.oldLast, delta: cursorMaps.delta })
    .from(cursorMaps)
    .where(and(eq(cursorMaps.tenantId, tenantId), eq(cursorMaps.kind, kind), eq(cursorMaps.placement, placement), lte(cursorMaps.oldFirst, seq)))
    .orderBy(desc(cursorMaps.oldFirst))
    .limit(1)
    .get()
}

/**
 * A cursor's position as a number of the tenant's current placement (on its shard `db`). A cursor of a later
 * placement than the caller knows comes from a request that saw the tenant's move before this isolate's cache did:
 * it is answered 503 with Retry-After, and works once the cache has caught up. `unknown.placedAt` reads the
 * directory's placement (only then, a rare path): a cursor past it was never handed out, and gets the caller's own
 * refusal for an invalid cursor (`unknown.refuse`) instead of a 503 that retrying could never end.
 */
export type UnknownPlacement = { placedAt: () => Promise<number | undefined>; refuse: () => Error }

export async function seqHere(
  db: Db,
  tenant: { id: string; placement: number },
  kind: CursorMapKind,
  at: Position,
  side: Side,
  unknown?: UnknownPlacement
): Promise<number> {
  if (at.placement > tenant.placement) {
    const placed = unknown ? await unknown.placedAt() : undefined
    if (unknown && placed !== undefined && at.placement > placed) throw unknown.refuse()
    throw tenantMovingError()
  }
  let seq = at.seq
  for (let p = at.placement + 1; p <= tenant.placement; p++) seq = mapThrough(await segmentAt(db, tenant.id, kind, p, seq), seq, side)
  return seq
}

/** The statement recording one copied batch (the move writes it in the batch that inserts the rows). */
export function recordSegment(db: Db, tenantId: string, kind: CursorMapKind, placement: number, segment: Segment) {
  return db.insert(cursorMaps).values({ tenantId, kind, placement, ...segment })
}
