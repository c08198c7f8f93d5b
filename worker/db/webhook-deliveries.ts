/**
 * The delivery log and retry outbox (one row per event and subscription; see schema/d1.ts). Attempts are claimed
 * with a lease in one statement, so two runs never send the same attempt; an attempt's outcome is written only
 * if the row is still held by that attempt.
 */
import { and, desc, eq, inArray, isNull, lt, lte, or, sql, type SQL } from 'drizzle-orm'
import { events, tenants, webhookDeliveries, webhookHealth, webhooks, type DeliveryStatus } from '../../schema/d1'
import type { FailureType } from '../../schema/api/webhooks'
import { OWNER_ONLY_EVENT } from '../../schema/events'
import type { Db } from './client'
import { unfenced } from './fences'
import { pruneOlderThan } from './prune'
import type { EventOwner } from './events'
import { passesFilter } from './event-filter'
import { subscriptionLive } from './webhooks'

export type DeliveryRow = typeof webhookDeliveries.$inferSelect
export type NewDelivery = typeof webhookDeliveries.$inferInsert

const d = webhookDeliveries

/**
 * The whole fan-out of some events as one statement: one delivery per (event, switched-on subscription that
 * subscribes to its type, whose filter it passes and which is still live: an MCP subscription's TTL and key), for
 * tenants with webhooks on, written only while the event exists and is undispatched
 * (the dispatched mark follows in the same batch) and only once (the id is derived from the pair, the same
 * expression as webhooks/signing.ts `deliveryIdFor`). Rows for a paused URL are written `paused` and not claimed;
 * the others are claimed for attempt 1. Answers the rows it wrote.
 */
export function fanOutDeliveries(db: Db, eventIds: string[], now: number, leaseUntil: number, pausedMessage: string) {
  const e = events
  const w = webhooks
  const h = webhookHealth
  const paused = sql`coalesce(${h.isDisabled}, 0)`
  const unlessPaused = <T>(value: T) => sql`case when ${paused} then null else ${value} end`
  return db
    .insert(d)
    .select(
      db
        .select({
          id: sql`'dlv_' || substr(${e.id}, 5) || substr(${w.id}, 4)`.as('id'),
          tenantId: sql`${e.tenantId}`.as('tenant_id'),
          webhookId: sql`${w.id}`.as('webhook_id'),
          eventId: sql`${e.id}`.as('event_id'),
          eventType: sql`${e.type}`.as('event_type'),
          accountId: sql`${e.accountId}`.as('account_id'),
          status: sql`case when ${paused} then 'paused' else 'pending' end`.as('status'),
          attempts: sql`case when ${paused} then 0 else 1 end`.as('attempts'),
          cycleStart: sql`0`.as('cycle_start'),
          nextAttemptAt: unlessPaused(now).as('next_attempt_at'),
          leaseUntil: unlessPaused(leaseUntil).as('lease_until'),
          lastAttemptAt: unlessPaused(now).as('last_attempt_at'),
          lastStatusCode: sql`null`.as('last_status_code'),
          lastFailureType: sql`null`.as('last_failure_type'),
          lastError: sql`case when ${paused} then ${pausedMessage} else null end`.as('last_error'),
          deliveredAt: sql`null`.as('delivered_at'),
          createdAt: sql`${e.createdAt}`.as('created_at'),
          updatedAt: sql`${now}`.as('updated_at'),
        })
        .from(e)
        .innerJoin(tenants, and(eq(tenants.id, e.tenantId), eq(tenants.webhooksEnabled, true)))
        .innerJoin(
          w,
          and(
            eq(w.tenantId, e.tenantId),
            eq(w.enabled, true),
            sql`exists (select 1 from json_each(${w.subscribedTo}) where value = ${e.type})`,
            passesFilter(w.filter),
            subscriptionLive(now),
            // Approval links go only to a destination the owner configured (docs/agent-safety.md).
            sql`(${e.type} <> ${OWNER_ONLY_EVENT} or ${w.ownerConfigured} = 1)`
          )
        )
        .leftJoin(h, and(eq(h.tenantId, w.tenantId), eq(h.url, w.url)))
        .where(and(inArray(e.id, eventIds), isNull(e.dispatchedAt)))
    )
    .onConflictDoNothing()
    .returning({ id: d.id, webhookId: d.webhookId, eventId: d.eventId, status: d.status })
}

/** Inserts a delivery unless it exists (a replay of an event that was never fanned out to this subscription). */
export function insertDelivery(db: Db, row: NewDelivery) {
  return db.insert(d).values(row).onConflictDoNothing()
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

export type LogFilter = {
  tenantId: string
  webhookId: string
  since: number
  before?: { createdAt: number; id: string }
  status?: DeliveryStatus
  limit: number
}

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
    .where(and(eq(d.status, 'pending'), lt(d.nextAttemptAt, before), or(isNull(d.leaseUntil), lt(d.leaseUntil, before)), unfenced(d.tenantId)))
    .limit(limit)
}

/** Deletes up to `limit` log rows older than `before` (retries end within hours; the log keeps 7 days). */
export function pruneDeliveries(db: Db, before: number, limit: number): Promise<number> {
  return pruneOlderThan(db, d, { id: d.id, tenantId: d.tenantId, createdAt: d.createdAt }, before, limit)
}
