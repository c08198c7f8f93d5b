/**
 * The one rule deciding whether an event passes an MCP subscription's filter (schema/events.ts `EventFilter`), as
 * SQL over the `events` row, so the webhook fan-out, webhook replay and `events/poll`/`events/stream` cannot disagree.
 * The filter is JSON text: a subscription's stored `filter` column, or the filter of a poll bound as a value.
 */
import { sql, type SQL, type SQLWrapper } from 'drizzle-orm'
import { events } from '../../schema/d1'
import type { EventFilter } from '../../schema/events'

/** Filter field → where the event row holds the value it is compared with. */
const MATCHED_IN_PAYLOAD: Array<[keyof EventFilter, string]> = [
  ['channel', '$.channel'],
  ['contact_id', '$.contact.id'],
  ['contact_phone', '$.contact.phone'],
]

/** Every field the filter gives must match (`account_ids`: any of them); a null filter passes every event. */
export function passesFilter(filter: SQLWrapper): SQL {
  const fields = MATCHED_IN_PAYLOAD.map(
    ([field, path]) =>
      sql`(json_type(${filter}, ${`$.${field}`}) is null or json_extract(${filter}, ${`$.${field}`}) is json_extract(${events.payload}, ${path}))`
  )
  const accounts = sql`(json_type(${filter}, '$.account_ids') is null or ${events.accountId} in (select value from json_each(${filter}, '$.account_ids')))`
  return sql`(${filter} is null or (${sql.join([accounts, ...fields], sql` and `)}))`
}

/** A filter as the JSON text `passesFilter` reads (null: no filter). */
export function filterText(filter: EventFilter | null): string | null {
  return filter === null || Object.keys(filter).length === 0 ? null : JSON.stringify(filter)
}
