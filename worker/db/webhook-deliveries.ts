/**
 * The delivery log and retry outbox (one row per event and subscription; see schema/d1.ts). Attempts are claimed
 * with a lease in one statement, so two runs never send the same attempt; an attempt's outcome is written only
 * if the row is still held by that attempt.
 */
import { and, desc, eq, inArray, isNull, lt, lte, or, sql, type SQL } from 'drizzle-orm'
import { events, webhookDeliveries, type DeliveryStatus } from '../../schema/d1'
import type { FailureType } from '../../schema/api/webhooks'
import type { Db } from './client'
import type { EventOwner } from './events'

export type DeliveryRow = typeof webhookDeliveries.$inferSelect
export type NewDelivery = typeof webhookDeliveries.$inferInsert

const d = webhookDeliveries

/** Inserts a delivery unless it exists (a second fan-out of the same event); `returning` tells whether it was ours. */
export function insertDelivery(db: Db, row: NewDelivery) {
  return db.insert(d).values(row).onConflictDoNothing().returning({ id: d.id })
}

/**
 * Fan-out's insert: the delivery is written only if its event exists and is not yet dispatched (the statement that
 * marks it dispatched follows in the same batch), and only once. `returning` says whether this fan-out owns it.
 */
export function insertDeliveryForEvent(db: Db, row: NewDelivery & { status: DeliveryStatus }) {
  const v = <T>(value: T, column: string) => sql`${value ?? null}`.as(column)
  return db
    .insert(d)
    .select(
      db
        .select({
          id: v(row.id, 'id'),
          tenantId: v(row.tenantId, 'tenant_id'),
          webhookId: v(row.webhookId, 'webhook_id'),
          eventId: v(row.eventId, 'event_id'),
          eventType: v(row.eventType, 'event_type'),
          accountId: v(row.accountId, 'account_id'),
          status: v(row.status, 'status'),
          attempts: v(row.attempts ?? 0, 'attempts'),
          cycleStart: v(0, 'cycle_start'),
          nextAttemptAt: v(row.nextAttemptAt, 'next_attempt_at'),
          leaseUntil: v(row.leaseUntil, 'lease_until'),
          lastAttemptAt: v(row.lastAttemptAt, 'last_attempt_at'),
          lastStatusCode: v(null, 'last_status_code'),
          lastFailureType: v(null, 'last_failure_type'),
          lastError: v(row.lastError, 'last_error'),
          deliveredAt: v(null, 'delivered_at'),
          createdAt: v(row.createdAt, 'created_at'),
          updatedAt: v(row.updatedAt, 'updated_at'),
        })
        .from(events)
        .where(and(eq(events.id, row.eventId), isNull(events.dispatchedAt)))
    )
    .onConflictDoNothing()
    .returning({ id: d.id })
}

/**
 * Claims up to `limit` due deliveries of one account for an attempt: each gets a lease and its attempt number.
 * One statement, so a concurrent run cannot claim the same row.
 */
export async function claimDue(db: Db, owner: EventOwner, now: number, leaseUntil: number, limit: number): Promise<DeliveryRow[]> {
  const due = db
    .select({ id: d.id })
    .from(d)
    .where(
      and(
        eq(d.tenantId, owner.tenantId),
        eq(d.accountId, owner.accountId),
        eq(d.status, 'pending'),
        lte(d.nextAttemptAt, now),
        or(isNull(d.leaseUntil), lte(d.leaseUntil, now))
      )
    )
    .orderBy(d.nextAttemptAt)
    .limit(limit)
  return db
    .update(d)
    .set({ leaseUntil: leaseUntil, attempts: sql`${d.attempts} + 1`, lastAttemptAt: now, updatedAt: now })
    .where(inArray(d.id, due))
    .returning()
}

export type AttemptFinish =
  | { status: 'delivered'; statusCode: number }
  | {
      status: 'pending' | 'failed'
      statusCode: number | null
      failureType: FailureType
      error: string
      nextAttemptAt: number | null
    }
  /** No request was made (URL paused, subscription or webhooks switched off): the claimed attempt is given back. */
  | { status: 'paused' | 'skipped' | 'failed'; notSent: true; error: string }

/** A statement recording the outcome of attempt `attempt`, applied only while that attempt still holds the row. */
export function finishAttempt(db: Db, id: string, attempt: number, f: AttemptFinish, now: number) {
  const held = and(eq(d.id, id), eq(d.status, 'pending'), eq(d.attempts, attempt))
  const common = { leaseUntil: null, updatedAt: now }
  if ('notSent' in f) {
    return db
      .update(d)
      .set({ ...common, status: f.status, attempts: attempt - 1, nextAttemptAt: null, lastError: f.error })
      .where(held)
  }
  if (f.status === 'delivered') {
    return db
      .update(d)
      .set({ ...common, status: 'delivered', nextAttemptAt: null, deliveredAt: now, lastStatusCode: f.statusCode, lastFailureType: null, lastError: null })
      .where(held)
  }
  return db
    .update(d)
    .set({
      ...common,
      status: f.status,
      nextAttemptAt: f.nextAttemptAt,
      lastStatusCode: f.statusCode,
      lastFailureType: f.failureType,
      lastError: f.error,
    })
    .where(held)
}

/** When the owner's alarm must next fire: the earliest due row, or the end of a lease still running (eviction guard). */
export async function nextWakeAt(db: Db, owner: EventOwner): Promise<number | null> {
  const row = await db
    .select({ at: sql<number | null>`min(max(${d.nextAttemptAt}, coalesce(${d.leaseUntil}, 0)))` })
    .from(d)
    .where(and(eq(d.tenantId, owner.tenantId), eq(d.accountId, owner.accountId), eq(d.status, 'pending')))
    .get()
  return row?.at ?? null
}

export type LogFilter = { tenantId: string; webhookId: string; since: number; before?: { createdAt: number; id: string }; status?: DeliveryStatus; limit: number }

/** One subscription's log, newest first, one extra row to know whether another page exists. */
export async function listDeliveries(db: Db, f: LogFilter): Promise<{ rows: DeliveryRow[]; more: boolean }> {
  const where: SQL[] = [eq(d.tenantId, f.tenantId), eq(d.webhookId, f.webhookId), sql`${d.createdAt} >= ${f.since}`]
  if (f.status) where.push(eq(d.status, f.status))
  if (f.before) where.push(or(lt(d.createdAt, f.before.createdAt), and(eq(d.createdAt, f.before.createdAt), lt(d.id, f.before.id)))!)
  const rows = await db
    .select()
    .from(d)
    .where(and(...where))
    .orderBy(desc(d.createdAt), desc(d.id))
    .limit(f.limit + 1)
  return { rows: rows.slice(0, f.limit), more: rows.length > f.limit }
}

export async function deliveriesByIds(db: Db, ids: string[]): Promise<DeliveryRow[]> {
  return ids.length === 0 ? [] : db.select().from(d).where(inArray(d.id, ids))
}

/**
 * A statement putting a delivery back in the queue for a replay: due now, a new retry cycle, same id. A row
 * with an attempt in flight is left alone (that attempt decides).
 */
export function requeueDelivery(db: Db, id: string, now: number) {
  return db
    .update(d)
    .set({ status: 'pending', nextAttemptAt: now, cycleStart: sql`${d.attempts}`, updatedAt: now })
    .where(and(eq(d.id, id), or(isNull(d.leaseUntil), lte(d.leaseUntil, now))))
}

export function deleteDeliveriesOf(db: Db, tenantId: string, webhookId: string) {
  return db.delete(d).where(and(eq(d.tenantId, tenantId), eq(d.webhookId, webhookId)))
}

/** Accounts holding deliveries overdue since before `before` (an alarm that was lost); the sweeper kicks them. */
export async function overdueOwners(db: Db, before: number, limit: number): Promise<EventOwner[]> {
  return db
    .selectDistinct({ tenantId: d.tenantId, accountId: d.accountId })
    .from(d)
    .where(and(eq(d.status, 'pending'), lt(d.nextAttemptAt, before), or(isNull(d.leaseUntil), lt(d.leaseUntil, before))))
    .limit(limit)
}

/** Deletes up to `limit` log rows older than `before` (retries end within hours; the log keeps 7 days). */
export async function pruneDeliveries(db: Db, before: number, limit: number): Promise<number> {
  const rows = await db
    .delete(d)
    .where(inArray(d.id, db.select({ id: d.id }).from(d).where(lt(d.createdAt, before)).limit(limit)))
    .returning({ id: d.id })
  return rows.length
}
