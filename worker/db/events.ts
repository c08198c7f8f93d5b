/**
 * The event outbox in D1: each event is inserted in the same batch as the change that caused it. Every insert
 * statement remembers the event it writes (`eventOf`), so the commit helpers (AccountContext.commit inside the
 * AccountDO, commitEvents in routes) start webhook fan-out on the right Durable Object without being told, and
 * without reading the event back.
 */
import { and, asc, eq, inArray, isNull, lt, sql, type SQL } from 'drizzle-orm'
import { z } from 'zod'
import { accounts, contacts, events, messages, tenants, webhooks } from '../../schema/d1'
import { OWNER_ONLY_EVENT, type EventPayload, type MessageEvent } from '../../schema/events'
import { newId } from '../lib/ids'
import type { Db } from './client'
import { unfenced } from './fences'
import { pruneOlderThan } from './prune'
import { compiledVariants, placeholders } from './compiled'
import { constantRow } from './constant-row'
import { passesFilter } from './event-filter'

export type EventRow = typeof events.$inferSelect

/** The Durable Object that dispatches an event: the account that emitted it. */
export type EventOwner = { tenantId: string; accountId: string }

/**
 * What an insert statement will write, known before it runs (the fan-out starts from this, not a re-read).
 * `dispatchedAt` is set when the insert itself found nothing to fan out to (see dispatchedUnlessSubscribed).
 */
export type EventCandidate = Pick<EventRow, 'id' | 'tenantId' | 'accountId' | 'type' | 'payload' | 'createdAt' | 'dispatchedAt'>

const written = new WeakMap<object, EventCandidate[]>()

/** Registers what a statement may insert; it must `RETURNING` WRITTEN's columns (see eventsWritten). */
function remember<T extends object>(statement: T, events: EventCandidate[]): T {
  written.set(statement, events)
  return statement
}

/**
 * The event a batch statement inserts, or undefined when it inserts none. A conditional insert may end up writing
 * nothing; the fan-out only acts on events that exist (its delivery inserts are conditional on the event row).
 */
export function eventOf(statement: unknown): EventCandidate | undefined {
  return typeof statement === 'object' && statement !== null ? written.get(statement)?.[0] : undefined
}

const ReturnedRow = z.object({ id: z.string(), payload: z.string(), dispatched_at: z.number().nullable() })
/** Drizzle's batch answers the returned rows; a raw D1 batch (compiled statements) answers them in `results`. */
const Returned = z.union([z.array(ReturnedRow), z.object({ results: z.array(ReturnedRow) }).transform((r) => r.results)])

/**
 * The events a batch actually wrote, read from its results: every event insert is an insert…select that answers
 * what it wrote (a conditional one may write nothing), with the stored payload (SQL may have completed it: the
 * contact of message.received) and whether it still awaits fan-out (dispatchedUnlessSubscribed).
 */
export function eventsWritten(statements: readonly unknown[], results: readonly unknown[]): EventCandidate[] {
  const out: EventCandidate[] = []
  statements.forEach((statement, i) => {
    const candidates = typeof statement === 'object' && statement !== null ? written.get(statement) : undefined
    if (!candidates) return
    const stored = new Map(Returned.parse(results[i]).map((r) => [r.id, r]))
    for (const e of candidates) {
      const row = stored.get(e.id)
      if (row) out.push({ ...e, payload: row.payload, dispatchedAt: row.dispatched_at })
    }
  })
  return out
}

function candidate(tenantId: string, accountId: string, payload: EventPayload, now: number): EventCandidate {
  return { id: newId('evt'), tenantId, accountId, type: payload.event, payload: JSON.stringify(payload), createdAt: now, dispatchedAt: null }
}

/** What every event insert answers (eventsWritten): the stored payload and whether it still awaits fan-out. */
const WRITTEN = { id: events.id, payload: events.payload, dispatched_at: events.dispatchedAt }

export function insertEvent(db: Db, tenantId: string, accountId: string, payload: EventPayload, now: number) {
  const event = candidate(tenantId, accountId, payload, now)
  const statement = db
    .insert(events)
    .select(db.select(constantRow(events, event, { dispatchedAt: dispatchedUnlessSubscribed(tenantId, event.type, now) })).from(sql`(select 1)`))
    .returning(WRITTEN)
  return remember(statement, [event])
}

/**
 * Inserts the event only if a message matching `condition` exists when the batch runs. This keeps "the change
 * applied" and "its event exists" atomic when the change itself is conditional (an insert that may be a
 * duplicate, a status move that a newer attempt may have overtaken).
 */
export function insertEventIfMessage(db: Db, tenantId: string, accountId: string, payload: EventPayload, now: number, condition: SQL) {
  return insertEventIfRow(db, tenantId, accountId, payload, now, messages, condition)
}

/**
 * Inserts the event only if an account row matching `condition` exists when the batch runs: an account's status
 * event is decided by the row as it is then (D1 runs one batch at a time), not by what the caller read before, so
 * concurrent requests making the same move emit its event once.
 */
export function insertEventIfAccount(db: Db, tenantId: string, accountId: string, payload: EventPayload, now: number, condition: SQL) {
  return insertEventIfRow(db, tenantId, accountId, payload, now, accounts, condition)
}

function insertEventIfRow(
  db: Db,
  tenantId: string,
  accountId: string,
  payload: EventPayload,
  now: number,
  from: typeof messages | typeof accounts,
  condition: SQL
) {
  const event = candidate(tenantId, accountId, payload, now)
  const statement = db
    .insert(events)
    .select(
      db
        .select(constantRow(events, event, { dispatchedAt: dispatchedUnlessSubscribed(tenantId, event.type, now) }))
        .from(from)
        .where(condition)
        .limit(1)
    )
    .returning(WRITTEN)
  return remember(statement, [event])
}

/**
 * The `dispatched_at` of an event as it is inserted: null (awaiting fan-out) while the tenant has webhooks on and a
 * switched-on subscription to its type, else `now`, so an event nobody subscribes to costs no fan-out round trip.
 * Deciding inside the insert is the fan-out's own rule applied atomically: D1 has one writer, so a subscription
 * (or a switch turned on) either committed before this batch, and the event waits for its fan-out, or after it,
 * and the event predates the subscription, which fan-out would not give it either once it found none.
 */
function dispatchedUnlessSubscribed(tenantId: unknown, type: unknown, now: unknown): SQL {
  const subscribed = sql`exists (select 1 from ${webhooks} inner join ${tenants} on ${tenants.id} = ${webhooks.tenantId}
    where ${webhooks.tenantId} = ${tenantId} and ${webhooks.enabled} = 1 and ${tenants.webhooksEnabled} = 1
      and exists (select 1 from json_each(${webhooks.subscribedTo}) where value = ${type})
      and (${type} <> ${OWNER_ONLY_EVENT} or ${webhooks.ownerConfigured} = 1))`
  return sql`case when ${subscribed} then null else ${now} end`
}

type ReceivedEventValues = { id: string; tenantId: string; accountId: string; payload: string; messageId: string; now: number }

/**
 * Four variants, by whether the contact is on beta (its @username is part of `contact`) and whether the message is
 * a reply (`message.reply_to` is set): each statement holds one JSON expression, not the four a SQL `case` spelled
 * out, which SQLite compiles whenever local D1 prepares the statement, for every message (a small part of the
 * batch: docs/performance-history.md). The caller knows both: a contact's channel is its account's, and the
 * message's reply_to is null exactly when it quotes nothing (insertInboundUnlessPrivate).
 */
const receivedEventInsert = compiledVariants<{ beta: boolean; reply: boolean }, ReceivedEventValues>((db, { beta, reply }) => {
  const p = placeholders<ReceivedEventValues>()
  const event = { id: p.id, tenantId: p.tenantId, accountId: p.accountId, type: 'message.received', payload: p.payload, createdAt: p.now }
  const name = sql`coalesce(nullif(${contacts.name}, ''), nullif(trim(coalesce(${contacts.firstName}, '') || ' ' || coalesce(${contacts.lastName}, '')), ''))`
  // beta contacts carry the person's @username too (db/wire.ts toWireContact gives the same shape).
  const contact = beta
    ? sql`json_object('id', ${contacts.id}, 'phone', ${contacts.phone}, 'name', ${name}, 'username', ${contacts.username})`
    : sql`json_object('id', ${contacts.id}, 'phone', ${contacts.phone}, 'name', ${name})`
  // A reply carries what it quotes as the insert stored it (our id, or the network's): only then, so other payloads keep the spec's fields.
  const withContact = reply
    ? sql`json_set(${p.payload}, '$.contact', ${contact}, '$.message.reply_to', ${messages.replyTo})`
    : sql`json_set(${p.payload}, '$.contact', ${contact})`
  return db
    .insert(events)
    .select(
      db
        .select(constantRow(events, event, { payload: withContact, dispatchedAt: dispatchedUnlessSubscribed(p.tenantId, 'message.received', p.now) }))
        .from(messages)
        .innerJoin(contacts, eq(contacts.id, messages.contactId))
        .where(eq(messages.id, p.messageId))
    )
    .returning(WRITTEN)
})

/**
 * `message.received` for a message inserted in the same batch: inserted only if that message row exists (not a
 * duplicate, not a private contact), with `contact` filled in by SQL from the stored contact row, so the payload
 * shows the names the contact has after this message without a read before the batch. `RETURNING` hands the
 * completed payload back to the fan-out (eventsWritten), and whether anything subscribes to it. `message` is the row
 * given to insertInboundUnlessPrivate: its `replyTo` picks the variant as it picks that insert's. Compiled once per
 * variant: it runs for every inbound message.
 */
export function insertReceivedEvent(
  db: Db,
  tenantId: string,
  accountId: string,
  payload: MessageEvent,
  message: { id: string; replyTo: string | null },
  now: number
): D1PreparedStatement {
  const event = candidate(tenantId, accountId, payload, now)
  const variant = { beta: payload.channel === 'beta', reply: message.replyTo !== null }
  const statement = receivedEventInsert(db, variant).bind(db, { id: event.id, tenantId, accountId, payload: event.payload, messageId: message.id, now })
  return remember(statement, [event])
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
  return db
    .update(events)
    .set({ dispatchedAt: now })
    .where(and(inArray(events.id, ids), isNull(events.dispatchedAt)))
}

export async function eventsByIds(db: Db, ids: string[]): Promise<EventRow[]> {
  return ids.length === 0 ? [] : db.select().from(events).where(inArray(events.id, ids))
}

/**
 * A tenant's events of the given types in [since, until) that pass `filter` (a subscription's filter JSON, null for
 * none; db/event-filter.ts), oldest first: what a webhook replay re-sends.
 */
export async function eventsInWindow(
  db: Db,
  tenantId: string,
  types: string[],
  filter: string | null,
  since: number,
  until: number,
  limit: number
): Promise<EventRow[]> {
  return db
    .select()
    .from(events)
    .where(
      and(
        eq(events.tenantId, tenantId),
        inArray(events.type, types),
        sql`${events.createdAt} >= ${since}`,
        lt(events.createdAt, until),
        passesFilter(sql`${filter}`)
      )
    )
    .orderBy(asc(events.createdAt), asc(events.id))
    .limit(limit)
}

/** Accounts with events that nobody fanned out since before `before` (a lost notification); the sweeper kicks them. */
export async function undispatchedOwners(db: Db, before: number, limit: number): Promise<EventOwner[]> {
  return db
    .selectDistinct({ tenantId: events.tenantId, accountId: events.accountId })
    .from(events)
    .where(and(isNull(events.dispatchedAt), lt(events.createdAt, before), unfenced(events.tenantId)))
    .limit(limit)
}

/** Deletes up to `limit` events older than `before`; answers how many went. */
export function pruneEvents(db: Db, before: number, limit: number): Promise<number> {
  return pruneOlderThan(db, events, { id: events.id, tenantId: events.tenantId, createdAt: events.createdAt }, before, limit)
}
