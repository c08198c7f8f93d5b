/**
 * The event outbox in D1: each event is inserted in the same batch as the change that caused it. Every insert
 * statement remembers the event it writes (`eventOf`), so the commit helpers (AccountContext.commit inside the
 * AccountDO, commitEvents in routes) start webhook fan-out on the right Durable Object without being told, and
 * without reading the event back.
 */
import { and, asc, eq, inArray, isNull, lt, sql, type SQL } from 'drizzle-orm'
import { contacts, events, messages } from '../../schema/d1'
import type { EventPayload } from '../../schema/events'
import { newId } from '../lib/ids'
import type { Db } from './client'
import { constantRow } from './constant-row'

export type EventRow = typeof events.$inferSelect

/** The Durable Object that dispatches an event: the account that emitted it. */
export type EventOwner = { tenantId: string; accountId: string }

/** What an insert statement will write, known before it runs (the fan-out starts from this, not a re-read). */
export type EventCandidate = Pick<EventRow, 'id' | 'tenantId' | 'accountId' | 'type' | 'payload' | 'createdAt'>

type Written = { event: EventCandidate; conditional: boolean }
const written = new WeakMap<object, Written>()

function remember<T extends object>(statement: T, event: EventCandidate, conditional = false): T {
  written.set(statement, { event, conditional })
  return statement
}

/**
 * The event a batch statement inserts, or undefined when it inserts none. A conditional insert may end up writing
 * nothing; the fan-out only acts on events that exist (its delivery inserts are conditional on the event row).
 */
export function eventOf(statement: unknown): EventCandidate | undefined {
  return typeof statement === 'object' && statement !== null ? written.get(statement)?.event : undefined
}

/**
 * The events a batch actually wrote, read from its results: a conditional insert (`RETURNING payload`) that wrote
 * nothing drops out, and one whose payload SQL completed (the contact of message.received) carries the stored text.
 */
export function eventsWritten(statements: readonly unknown[], results: readonly unknown[]): EventCandidate[] {
  const out: EventCandidate[] = []
  statements.forEach((statement, i) => {
    const w = typeof statement === 'object' && statement !== null ? written.get(statement) : undefined
    if (!w) return
    if (!w.conditional) return void out.push(w.event)
    const rows = results[i]
    const stored = Array.isArray(rows) ? (rows[0] as { payload?: unknown } | undefined) : undefined
    if (stored && typeof stored.payload === 'string') out.push({ ...w.event, payload: stored.payload })
  })
  return out
}

function candidate(tenantId: string, accountId: string, payload: EventPayload, now: number): EventCandidate {
  return { id: newId('evt'), tenantId, accountId, type: payload.event, payload: JSON.stringify(payload), createdAt: now }
}

export function insertEvent(db: Db, tenantId: string, accountId: string, payload: EventPayload, now: number) {
  const event = candidate(tenantId, accountId, payload, now)
  return remember(db.insert(events).values(event), event)
}

/**
 * Inserts the event only if a message matching `condition` exists when the batch runs. This keeps "the change
 * applied" and "its event exists" atomic when the change itself is conditional (an insert that may be a
 * duplicate, a status move that a newer attempt may have overtaken).
 */
export function insertEventIfMessage(db: Db, tenantId: string, accountId: string, payload: EventPayload, now: number, condition: SQL) {
  const event = candidate(tenantId, accountId, payload, now)
  const statement = db
    .insert(events)
    .select(db.select(constantRow(events, event)).from(messages).where(condition).limit(1))
    .returning({ payload: events.payload })
  return remember(statement, event, true)
}

/**
 * `message.received` for a message inserted in the same batch: inserted only if that message row exists (not a
 * duplicate, not a private contact), with `contact` filled in by SQL from the stored contact row, so the payload
 * shows the names the contact has after this message without a read before the batch. `RETURNING` hands the
 * completed payload back to the fan-out (eventsWritten).
 */
export function insertReceivedEvent(db: Db, tenantId: string, accountId: string, payload: EventPayload, messageId: string, now: number) {
  const event = candidate(tenantId, accountId, payload, now)
  const name = sql`coalesce(nullif(${contacts.name}, ''), nullif(trim(coalesce(${contacts.firstName}, '') || ' ' || coalesce(${contacts.lastName}, '')), ''))`
  const withContact = sql`json_set(${event.payload}, '$.contact', json_object('id', ${contacts.id}, 'phone', ${contacts.phone}, 'name', ${name}))`
  const statement = db
    .insert(events)
    .select(
      db
        .select(constantRow(events, event, { payload: withContact }))
        .from(messages)
        .innerJoin(contacts, eq(contacts.id, messages.contactId))
        .where(eq(messages.id, messageId))
    )
    .returning({ payload: events.payload })
  return remember(statement, event, true)
}

/** Events of one account not yet fanned out to webhooks, oldest first. */
export async function pendingEvents(db: Db, owner: EventOwner, limit: number): Promise<EventRow[]> {
  return db
    .select()
    .from(events)
    .where(and(eq(events.tenantId, owner.tenantId), eq(events.accountId, owner.accountId), isNull(events.dispatchedAt)))
    .orderBy(asc(events.createdAt))
    .limit(limit)
}

/** A statement marking events as fanned out. */
export function markDispatched(db: Db, ids: string[], now: number) {
  return db.update(events).set({ dispatchedAt: now }).where(and(inArray(events.id, ids), isNull(events.dispatchedAt)))
}

export async function eventsByIds(db: Db, ids: string[]): Promise<EventRow[]> {
  return ids.length === 0 ? [] : db.select().from(events).where(inArray(events.id, ids))
}

/** A tenant's events of the given types in [since, until), oldest first: what a webhook replay re-sends. */
export async function eventsInWindow(db: Db, tenantId: string, types: string[], since: number, until: number, limit: number): Promise<EventRow[]> {
  return db
    .select()
    .from(events)
    .where(and(eq(events.tenantId, tenantId), inArray(events.type, types), sql`${events.createdAt} >= ${since}`, lt(events.createdAt, until)))
    .orderBy(asc(events.createdAt), asc(events.id))
    .limit(limit)
}

/** Accounts with events that nobody fanned out since before `before` (a lost notification); the sweeper kicks them. */
export async function undispatchedOwners(db: Db, before: number, limit: number): Promise<EventOwner[]> {
  return db
    .selectDistinct({ tenantId: events.tenantId, accountId: events.accountId })
    .from(events)
    .where(and(isNull(events.dispatchedAt), lt(events.createdAt, before)))
    .limit(limit)
}

/** Deletes up to `limit` events older than `before`; answers how many went. */
export async function pruneEvents(db: Db, before: number, limit: number): Promise<number> {
  const rows = await db
    .delete(events)
    .where(inArray(events.id, db.select({ id: events.id }).from(events).where(lt(events.createdAt, before)).limit(limit)))
    .returning({ id: events.id })
  return rows.length
}
