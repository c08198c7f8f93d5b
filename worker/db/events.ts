/** The event outbox in D1: each event is inserted in the same batch as the change that caused it. */
import { eq, sql, type SQL } from 'drizzle-orm'
import { contacts, events, messages } from '../../schema/d1'
import type { EventPayload } from '../../schema/events'
import { newId } from '../lib/ids'
import type { Db } from './client'
import { constantRow } from './constant-row'

export type EventRow = typeof events.$inferSelect

export function insertEvent(db: Db, tenantId: string, accountId: string, payload: EventPayload, now: number) {
  return db.insert(events).values({
    id: newId('evt'),
    tenantId,
    accountId,
    type: payload.event,
    payload: JSON.stringify(payload),
    createdAt: now,
  })
}

/**
 * Inserts the event only if a message matching `condition` exists when the batch runs. This keeps "the change
 * applied" and "its event exists" atomic when the change itself is conditional (an insert that may be a
 * duplicate, a status move that a newer attempt may have overtaken).
 */
export function insertEventIfMessage(db: Db, tenantId: string, accountId: string, payload: EventPayload, now: number, condition: SQL) {
  const row = { id: newId('evt'), tenantId, accountId, type: payload.event, payload: JSON.stringify(payload), createdAt: now }
  return db.insert(events).select(db.select(constantRow(events, row)).from(messages).where(condition).limit(1))
}

/**
 * `message.received` for a message inserted in the same batch: inserted only if that message row exists (not a
 * duplicate, not a private contact), with `contact` filled from the stored contact row, so the payload shows the
 * names the contact has after this message, without a read before the batch.
 */
export function insertReceivedEvent(db: Db, tenantId: string, accountId: string, payload: EventPayload, messageId: string, now: number) {
  const name = sql`coalesce(nullif(${contacts.name}, ''), nullif(trim(coalesce(${contacts.firstName}, '') || ' ' || coalesce(${contacts.lastName}, '')), ''))`
  const row = { id: newId('evt'), tenantId, accountId, type: payload.event, createdAt: now }
  const withContact = sql`json_set(${JSON.stringify(payload)}, '$.contact', json_object('id', ${contacts.id}, 'phone', ${contacts.phone}, 'name', ${name}))`
  return db.insert(events).select(
    db
      .select(constantRow(events, row, { payload: withContact }))
      .from(messages)
      .innerJoin(contacts, eq(contacts.id, messages.contactId))
      .where(eq(messages.id, messageId))
  )
}
