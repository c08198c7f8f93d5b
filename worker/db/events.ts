/** The event outbox in D1: each event is inserted in the same batch as the change that caused it. */
import { sql, type SQL } from 'drizzle-orm'
import { events, messages } from '../../schema/d1'
import type { EventPayload } from '../../schema/events'
import { newId } from '../lib/ids'
import type { Db } from './client'

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
  return db.insert(events).select(
    db
      .select({
        id: sql`${newId('evt')}`.as('id'),
        tenantId: sql`${tenantId}`.as('tenant_id'),
        accountId: sql`${accountId}`.as('account_id'),
        type: sql`${payload.event}`.as('type'),
        payload: sql`${JSON.stringify(payload)}`.as('payload'),
        createdAt: sql`${now}`.as('created_at'),
        dispatchedAt: sql`null`.as('dispatched_at'),
      })
      .from(messages)
      .where(condition)
      .limit(1)
  )
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
    const rows = sql.join(
      items.slice(i, i + perStatement).map((it) => sql`(${newId('evt')}, ${it.payload.event}, ${JSON.stringify(it.payload)}, ${it.messageId})`),
      sql`, `
    )
    out.push(
      db.insert(events).select(
        sql`SELECT v.column1, ${tenantId}, ${accountId}, v.column2, v.column3, ${now}, NULL FROM (VALUES ${rows}) AS v
            WHERE EXISTS (SELECT 1 FROM ${messages} m WHERE m.id = v.column4)`
      )
    )
  }
  return out
}
