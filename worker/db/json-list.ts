/**
 * A list of values as one bound parameter: `column in (select value from json_each(?))`. D1 binds at most 100
 * parameters per statement, so a list that may be longer (a page of 500 ids, an imported address book) cannot be
 * spread over `in (?, ?, …)`.
 */
import { sql, type SQL } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'

export function inJsonList(column: SQLiteColumn, values: readonly (string | number)[]): SQL {
  return sql`${column} in (select value from json_each(${JSON.stringify(values)}))`
}
