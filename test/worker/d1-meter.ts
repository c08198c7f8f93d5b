/**
 * Counting what D1 is asked to do: statements, round trips (a batch is one), and the rows D1 itself reports in each
 * result's `meta` (`rows_read`, `rows_written`, `changes`). Nothing is estimated: the figures are D1's own.
 *
 * Two ways in: `D1Meter` is a binding to hand the Worker as its `DB` (`worker.fetch(request, { ...env, DB:
 * meter.d1 }, ctx)`), to read what one request cost; `meterEveryD1` counts every D1 call of the isolate, the
 * Durable Objects' included (they share the test isolate), for work that crosses into them.
 *
 * Drizzle reads through `raw()` and `first()`, which answer rows without `meta`. A read is therefore first run with
 * `all()` for its meta and then answered as asked; a write (`… RETURNING` through `raw()`) must run once, so it is
 * run with `all()` and its rows handed back as arrays (its columns come from one table, so no name repeats).
 */
export type D1Totals = { statements: number; roundTrips: number; rowsRead: number; rowsWritten: number; changes: number }
/** Every statement the meter ran, with its SQL and D1's meta for it (for query plans and per-statement figures). */
export type MeteredStatement = { sql: string; params: unknown[]; rowsRead: number; rowsWritten: number }

type Meta = { rows_read?: number; rows_written?: number; changes?: number }
type Result = { results: Record<string, unknown>[]; meta: Meta }
/** What a metered statement needs of the real one. */
type Exec = { all(): Promise<Result>; raw(options?: { columnNames?: boolean }): Promise<unknown[]>; first(column?: string): Promise<unknown> }

/** A comment that keeps a statement out of the figures: a test polling the state while the measured work runs. */
export const UNMETERED = '/* unmetered */'

const zero = (): D1Totals => ({ statements: 0, roundTrips: 0, rowsRead: 0, rowsWritten: 0, changes: 0 })
const isRead = (sql: string) => /^\s*(select|with|explain)\b/i.test(sql)

class Counter {
  totals = zero()
  log: MeteredStatement[] = []

  /** The log of the work `reset` (or `measure`) just closed. */
  lastLog: MeteredStatement[] = []

  reset(): D1Totals {
    const was = this.totals
    this.totals = zero()
    this.lastLog = this.log
    this.log = []
    return was
  }

  /** The totals of whatever `work` did. */
  async measure(work: () => Promise<unknown>): Promise<D1Totals> {
    this.reset()
    await work()
    return this.reset()
  }

  /**
   * Logs statements as they go out (so one that fails is still seen); `count` adds D1's meta once it answered. A
   * statement carrying UNMETERED (a test's own look at the state) is left out.
   */
  sent(sql: string, params: unknown[], roundTrip: boolean): MeteredStatement {
    const entry = { sql, params, rowsRead: 0, rowsWritten: 0 }
    if (sql.includes(UNMETERED)) return entry
    this.log.push(entry)
    this.totals.statements++
    if (roundTrip) this.totals.roundTrips++
    return entry
  }

  count(entry: MeteredStatement, meta: Meta | undefined): void {
    if (entry.sql.includes(UNMETERED)) return
    entry.rowsRead = meta?.rows_read ?? 0
    entry.rowsWritten = meta?.rows_written ?? 0
    this.totals.rowsRead += entry.rowsRead
    this.totals.rowsWritten += entry.rowsWritten
    this.totals.changes += meta?.changes ?? 0
  }

  /** One statement's call, counted: `all`/`run` as they are, `raw`/`first` as described at the top. */
  async call(stmt: Exec, sql: string, params: unknown[], method: 'all' | 'run' | 'raw' | 'first', arg?: unknown): Promise<unknown> {
    const entry = this.sent(sql, params, true)
    const r = await stmt.all()
    this.count(entry, r.meta)
    if (method === 'all' || method === 'run') return r
    if (isRead(sql)) return method === 'raw' ? stmt.raw(arg === undefined ? undefined : { columnNames: true }) : stmt.first(arg as string | undefined)
    if (method === 'first') return typeof arg === 'string' ? (r.results[0]?.[arg] ?? null) : (r.results[0] ?? null)
    const rows = r.results.map((row) => Object.values(row))
    return arg === undefined ? rows : [Object.keys(r.results[0] ?? {}), ...rows]
  }
}

const RAW = Symbol('inner statement')

/** A D1 binding that counts what goes through it. */
export class D1Meter extends Counter {
  readonly d1: D1Database

  constructor(private readonly inner: D1Database) {
    super()
    this.d1 = this.wrapDatabase()
  }

  private wrapStatement(stmt: D1PreparedStatement, sql: string, params: unknown[]): D1PreparedStatement {
    const exec = stmt as unknown as Exec
    const wrapped = {
      [RAW]: { stmt, sql, params },
      bind: (...values: unknown[]) => this.wrapStatement(stmt.bind(...values), sql, values),
      run: () => this.call(exec, sql, params, 'run'),
      all: () => this.call(exec, sql, params, 'all'),
      first: (column?: string) => this.call(exec, sql, params, 'first', column),
      raw: (options?: { columnNames?: boolean }) => this.call(exec, sql, params, 'raw', options?.columnNames ? true : undefined),
    }
    // The wrapper answers every call the Worker makes of a statement; D1's own type has private parts it cannot copy.
    return wrapped as unknown as D1PreparedStatement
  }

  private wrapDatabase(): D1Database {
    const inner = this.inner
    const wrapped = {
      prepare: (sql: string) => this.wrapStatement(inner.prepare(sql), sql, []),
      batch: async <T>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]> => {
        const parts = statements.map(unwrap)
        const entries = parts.map((p, i) => this.sent(p.sql, p.params, i === 0))
        const results = await inner.batch<T>(parts.map((p) => p.stmt))
        results.forEach((r, i) => {
          this.count(entries[i]!, r.meta)
        })
        return results
      },
      exec: (query: string) => inner.exec(query),
      withSession: () => {
        throw new Error('D1Meter: sessions are not metered')
      },
      dump: () => inner.dump(),
    }
    return wrapped as unknown as D1Database
  }
}

function unwrap(s: D1PreparedStatement): { stmt: D1PreparedStatement; sql: string; params: unknown[] } {
  const raw: unknown = Reflect.get(s, RAW)
  if (raw && typeof raw === 'object' && 'stmt' in raw) return raw as { stmt: D1PreparedStatement; sql: string; params: unknown[] }
  return { stmt: s, sql: '(unmetered)', params: [] }
}

/**
 * Counts every D1 call of this isolate (the Worker's, and the Durable Objects' that share it) by patching the
 * binding's classes, until `restore()`. A statement's SQL and parameters are read from the fields D1 keeps on it
 * (`statement`, `params`).
 */
export function meterEveryD1(sample: D1Database): Counter & { restore(): void } {
  const counter = new Counter()
  const dbProto: Record<string, unknown> = Object.getPrototypeOf(sample)
  const stmtProto: Record<string, unknown> = Object.getPrototypeOf(sample.prepare('SELECT 1'))
  const original = { batch: dbProto.batch, all: stmtProto.all, run: stmtProto.run, raw: stmtProto.raw, first: stmtProto.first }
  const call = <F>(f: unknown) => f as F
  const sqlOf = (stmt: object): string => {
    const text: unknown = Reflect.get(stmt, 'statement')
    return typeof text === 'string' ? text : ''
  }
  const paramsOf = (stmt: object): unknown[] => {
    const params: unknown = Reflect.get(stmt, 'params')
    return Array.isArray(params) ? params : []
  }
  const exec = (stmt: object): Exec => ({
    all: () => call<() => Promise<Result>>(original.all).call(stmt),
    raw: (o) => call<(o?: unknown) => Promise<unknown[]>>(original.raw).call(stmt, o),
    first: (c) => call<(c?: string) => Promise<unknown>>(original.first).call(stmt, c),
  })
  for (const method of ['all', 'run', 'raw', 'first'] as const) {
    stmtProto[method] = function (this: object, arg?: unknown) {
      const a = method === 'raw' ? (arg && typeof arg === 'object' && 'columnNames' in arg && arg.columnNames ? true : undefined) : arg
      return counter.call(exec(this), sqlOf(this), paramsOf(this), method, a)
    }
  }
  dbProto.batch = async function (this: object, statements: object[]) {
    const entries = statements.map((s, i) => counter.sent(sqlOf(s), paramsOf(s), i === 0))
    const results = await call<(s: object[]) => Promise<Result[]>>(original.batch).call(this, statements)
    results.forEach((r, i) => {
      counter.count(entries[i]!, r.meta)
    })
    return results
  }
  return Object.assign(counter, {
    restore() {
      Object.assign(dbProto, { batch: original.batch })
      Object.assign(stmtProto, { all: original.all, run: original.run, raw: original.raw, first: original.first })
    },
  })
}
