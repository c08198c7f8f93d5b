/**
 * Statements Drizzle writes once, with placeholders, and hot paths bind per call. Drizzle stays the single source of
 * the SQL, but building a query costs more CPU than running it: a profile of an inbound burst put about 40 % of the
 * isolate's CPU in query building (`is()`, `buildQueryFromSourceParams`), so the inbound path compiles its statements
 * once per isolate and binds plain values (through each column's encoder, as Drizzle would) into D1 statements.
 * A bound statement answers raw rows (SQL column names), not Drizzle's mapped objects.
 */
import { getTableColumns, is, Param, Placeholder, sql, type Table } from 'drizzle-orm'
import type { Db } from './client'

type Query = { toSQL(): { sql: string; params: unknown[] } }
type Slot = { value: unknown } | { name: string; encode: ((v: unknown) => unknown) | null }

/** Values for a compiled statement: what its placeholders are named after. */
export type Values = Record<string, unknown>

/** A named placeholder per key of `V`, typed so a compiled statement cannot ask for a value its caller lacks. */
export function placeholders<V extends Values>(): { [K in keyof V]-?: Placeholder<K & string> } {
  return new Proxy({} as { [K in keyof V]-?: Placeholder<K & string> }, {
    get: (_, name) => sql.placeholder(String(name)),
  })
}

export class Compiled<V extends Values> {
  readonly text: string
  private readonly slots: Slot[]

  constructor(query: Query) {
    const { sql: text, params } = query.toSQL()
    this.text = text
    this.slots = params.map((p): Slot => {
      if (is(p, Placeholder)) return { name: p.name, encode: null }
      if (is(p, Param) && is(p.value, Placeholder)) {
        const encoder = p.encoder
        return { name: p.value.name, encode: encoder ? (v) => encoder.mapToDriverValue(v) : null }
      }
      return { value: p }
    })
  }

  bind(db: Db, values: V): D1PreparedStatement {
    const args = this.slots.map((s) => {
      if ('value' in s) return s.value
      if (!(s.name in values)) throw new Error(`no value for placeholder "${s.name}"`)
      const v = values[s.name]
      return s.encode && v !== null && v !== undefined ? s.encode(v) : (v ?? null)
    })
    return db.$client.prepare(this.text).bind(...args)
  }
}

/** Compiles on first use (with the caller's Drizzle handle, which only writes the SQL), once per isolate. */
export function compiled<V extends Values>(build: (db: Db) => Query): (db: Db) => Compiled<V> {
  let c: Compiled<V> | undefined
  return (db) => (c ??= new Compiled<V>(build(db)))
}

/** Compiles lazily, once per key: for statements whose shape varies with a few flags. */
export function compiledVariants<K, V extends Values>(build: (db: Db, key: K) => Query): (db: Db, key: K) => Compiled<V> {
  const cache = new Map<string, Compiled<V>>()
  return (db, key) => {
    const id = JSON.stringify(key)
    const cached = cache.get(id)
    if (cached) return cached
    const c = new Compiled<V>(build(db, key))
    cache.set(id, c)
    return c
  }
}

/**
 * Reads the object Drizzle would answer for `table` from a raw D1 row (`.raw()`: values in SELECT order) whose
 * columns from `at` on are the table's, in its column order (as `db.select({ x: table })` lists them): each value
 * through its column's decoder (booleans, JSON), null kept.
 */
export function rawRowReader<T extends Table>(table: T): (row: readonly unknown[], at: number) => T['$inferSelect'] {
  const columns = Object.entries(getTableColumns(table))
  return (row, at) => {
    const out: Record<string, unknown> = {}
    columns.forEach(([key, column], i) => {
      const raw = row[at + i]
      out[key] = raw === null || raw === undefined ? null : column.mapFromDriverValue(raw)
    })
    // Every column of the table was read above, through Drizzle's own decoders: exactly its select model.
    return out as T['$inferSelect']
  }
}
