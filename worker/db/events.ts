/**
 * The event outbox in D1: each event is inserted in the same batch as the change that caused it. Every insert
 * statement remembers the event it writes (`eventOf`), so the commit helpers (AccountContext.commit inside the
 * AccountDO, commitEvents in routes) start webhook fan-out on the right Durable Object without being told, and
 * without reading the event back.
 */
import { and, asc, eq, inArray, isNull, lt, sql, type SQL } from 'drizzle-orm'
import { z } from 'zod'
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

type Written = { events: EventCandidate[]; conditional: boolean }
const written = new WeakMap<object, Written>()

/** Registers what a statement inserts; a conditional one must `RETURNING id, payload` (see eventsWritten). */
function remember<T extends object>(statement: T, events: EventCandidate[], conditional = false): T {
  written.set(statement, { events, conditional })
  return statement
}

/**
 * The event a batch statement inserts, or undefined when it inserts none. A conditional insert may end up writing
 * nothing; the fan-out only acts on events that exist (its delivery inserts are conditional on the event row).
 */
export function eventOf(statement: unknown): EventCandidate | undefined {
  return typeof statement === 'object' && statement !== null ? written.get(statement)?.events[0] : undefined
}

const Returned = z.array(z.object({ id: z.string(), payload: z.string() }))

/**
 * The events a batch actually wrote, read from its results: a conditional insert (`RETURNING id, payload`) keeps
 * only the events it wrote, each with the stored payload (SQL may have completed it: the contact of
 * message.received).
 */
export function eventsWritten(statements: readonly unknown[], results: readonly unknown[]): EventCandidate[] {
  const out: EventCandidate[] = []
  statements.forEach((statement, i) => {
    const w = typeof statement === 'object' && statement !== null ? written.get(statement) : undefined
    if (!w) return
    if (!w.conditional) return void out.push(...w.events)
    const stored = new Map(Returned.parse(results[i]).map((r) => [r.id, r.payload]))
    for (const e of w.events) {
      const payload = stored.get(e.id)
      if (payload !== undefined) out.push({ ...e, payload })
    }
  })
  return out
}

function candidate(tenantId: string, accountId: string, payload: EventPayload, now: number): EventCandidate {
  return { id: newId('evt'), tenantId, accountId, type: payload.event, payload: JSON.stringify(payload), createdAt: now }
}

export function insertEvent(db: Db, tenantId: string, accountId: string, payload: EventPayload, now: number) {
  const event = candidate(tenantId, accountId, payload, now)
  return remember(db.insert(events).values(event), [event])
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
    .returning({ id: events.id, payload: events.payload })
  return remember(statement, [event], true)
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
    .returning({ id: events.id, payload: events.payload })
  return remember(statement, [event], true)
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

/**
 * Statements inserting each event only if its message exists when the batch runs (several per statement): the
 * multi-row form of insertEventIfMessage, for messages inserted earlier in the same batch that may have been skipped
 * as duplicates.
 */
export function insertEventsIfMessages(db: Db, tenantId: string, accountId: string, items: Array<{ payload: EventPayload; messageId: string }>, now: number) {
  const perStatement = 24 // 4 parameters per row and 3 shared: under D1's 100 per statement
  const out = []
  for (let i = 0; i < items.length; i += perStatement) {
    const chunk = items.slice(i, i + perStatement).map((it) => ({ event: candidate(tenantId, accountId, it.payload, now), messageId: it.messageId }))
    const rows = sql.join(
      chunk.map(({ event, messageId }) => sql`(${event.id}, ${event.type}, ${event.payload}, ${messageId})`),
      sql`, `
    )
    const statement = db
      .insert(events)
      .select(
        sql`SELECT v.column1, ${tenantId}, ${accountId}, v.column2, v.column3, ${now}, NULL FROM (VALUES ${rows}) AS v
            WHERE EXISTS (SELECT 1 FROM ${messages} m WHERE m.id = v.column4)`
      )
      .returning({ id: events.id, payload: events.payload })
    out.push(remember(statement, chunk.map((c) => c.event), true))
  }
  return out
}
