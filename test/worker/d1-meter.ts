/**
 * A D1 binding that counts what it is asked to do: statements, round trips (a batch is one), and the rows D1 itself
 * reports in each result's `meta` (`rows_read`, `rows_written`, `changes`). Hand it to the Worker as its `DB`
 * (`worker.fetch(request, { ...env, DB: meter.d1 }, ctx)`) to read what one request cost. Nothing is estimated: the
 * figures are D1's own.
 *
 * Drizzle reads through `raw()` and `first()`, which answer rows without `meta`; for those the meter first runs the
 * same statement with `all()` to read its meta, then answers the call as asked. Only reads take that detour, so a
 * write still runs once.
 */
export type D1Totals = { statements: number; roundTrips: number; rowsRead: number; rowsWritten: number; changes: number }
/** Every statement the meter ran, with its SQL and D1's meta for it (for query plans and per-statement figures). */
export type MeteredStatement = { sql: string; params: unknown[]; rowsRead: number; rowsWritten: number }

type Meta = { rows_read?: number; rows_written?: number; changes?: number }

const RAW = Symbol('inner statement')

export class D1Meter {
  totals: D1Totals = { statements: 0, roundTrips: 0, rowsRead: 0, rowsWritten: 0, changes: 0 }
  log: MeteredStatement[] = []
  readonly d1: D1Database

  constructor(private readonly inner: D1Database) {
    this.d1 = this.wrapDatabase()
  }

  reset(): D1Totals {
    const was = this.totals
    this.totals = { statements: 0, roundTrips: 0, rowsRead: 0, rowsWritten: 0, changes: 0 }
    this.log = []
    return was
  }

  /** The totals of whatever `work` did through this meter. */
  async measure(work: () => Promise<unknown>): Promise<D1Totals> {
    this.reset()
    await work()
    return this.reset()
  }

  /** Logs a statement as it goes out (so one that fails is still seen), then adds D1's meta once it answered. */
  private async record<R extends { meta?: Meta }>(sql: string, params: unknown[], run: () => Promise<R>): Promise<R> {
    const entry: MeteredStatement = { sql, params, rowsRead: 0, rowsWritten: 0 }
    this.log.push(entry)
    this.totals.statements++
    const r = await run()
    this.count(entry, r.meta)
    return r
  }

  private count(entry: MeteredStatement, meta: Meta | undefined): void {
    entry.rowsRead = meta?.rows_read ?? 0
    entry.rowsWritten = meta?.rows_written ?? 0
    this.totals.rowsRead += entry.rowsRead
    this.totals.rowsWritten += entry.rowsWritten
    this.totals.changes += meta?.changes ?? 0
  }

  private wrapStatement(stmt: D1PreparedStatement, sql: string, params: unknown[]): D1PreparedStatement {
    const meter = this
    const wrapped = {
      [RAW]: { stmt, sql, params },
      bind: (...values: unknown[]) => meter.wrapStatement(stmt.bind(...values), sql, values),
      run() {
        meter.totals.roundTrips++
        return meter.record(sql, params, () => stmt.run())
      },
      all() {
        meter.totals.roundTrips++
        return meter.record(sql, params, () => stmt.all())
      },
      async first(column?: string) {
        meter.totals.roundTrips++
        await meter.record(sql, params, () => stmt.all())
        return column === undefined ? stmt.first() : stmt.first(column)
      },
      async raw(options?: { columnNames?: boolean }) {
        meter.totals.roundTrips++
        await meter.record(sql, params, () => stmt.all())
        return options?.columnNames ? stmt.raw({ columnNames: true }) : stmt.raw()
      },
    }
    // The wrapper answers every call the Worker makes of a statement; D1's own type has private parts it cannot copy.
    return wrapped as unknown as D1PreparedStatement
  }

  private wrapDatabase(): D1Database {
    const meter = this
    const inner = this.inner
    const wrapped = {
      prepare: (sql: string) => meter.wrapStatement(inner.prepare(sql), sql, []),
      async batch<T>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]> {
        meter.totals.roundTrips++
        const parts = statements.map(unwrap)
        const entries = parts.map((p) => ({ sql: p.sql, params: p.params, rowsRead: 0, rowsWritten: 0 }))
        meter.log.push(...entries)
        meter.totals.statements += entries.length
        const results = await inner.batch<T>(parts.map((p) => p.stmt))
        results.forEach((r, i) => {
          meter.count(entries[i]!, r.meta)
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
