/**
 * `INSERT … SELECT <constants> FROM … WHERE <condition>` rows for Drizzle. Drizzle inserts a select's columns in the
 * table's column order, so this builds the constant selection from the table definition itself; conditional inserts
 * (insert only if a row exists, or is not private) then stay in one D1 batch without a read first.
 */
import { getTableColumns, is, SQL, sql, type Placeholder } from 'drizzle-orm'
import type { SQLiteTable } from 'drizzle-orm/sqlite-core'

export function constantRow<T extends SQLiteTable>(
  table: T,
  // A placeholder stands for a value bound later (db/compiled.ts); it goes through the column's encoder like a value.
  values: { [K in keyof T['$inferInsert']]?: T['$inferInsert'][K] | Placeholder },
  computed: Partial<Record<keyof T['$inferInsert'], SQL>> = {}
): { [K in keyof T['$inferInsert']]-?: SQL.Aliased } {
  const row: Record<string, SQL.Aliased> = {}
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    const expr = (computed as Record<string, SQL | undefined>)[key]
    // An omitted value takes the column's default, as a VALUES insert would.
    const given = (values as Record<string, unknown>)[key]
    const value = given === undefined ? column.default : given
    const constant = is(value, SQL) ? value : value === undefined || value === null ? sql`null` : sql`${sql.param(value, column)}`
    row[key] = (expr ?? constant).as(column.name)
  }
  // Every column of the table was filled above, which is exactly the mapped type.
  return row as { [K in keyof T['$inferInsert']]-?: SQL.Aliased }
}
