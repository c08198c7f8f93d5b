/**
 * Group commit: a write goes out on the next microtask, with every write queued in the same tick (the messages of a
 * relay burst, mapped through one loop); writes that arrive while a D1 batch is running share the next one. A lone
 * write waits for no timer. Under load that turns one D1 round trip per write into one per burst (D1 has a single writer, so round
 * trips, not SQL, bound throughput), without delaying a lone write. Each caller gets the results of its own
 * statements. If a shared batch fails (it is one transaction, so nothing of it was written), its members are
 * retried one by one, so one bad write fails only itself.
 */
/** Statements per D1 batch. */
const MAX_STATEMENTS = 100

type Statements<S> = [S, ...S[]]
type Pending<S, R> = { statements: Statements<S>; done: (results: R[]) => void; failed: (err: unknown) => void }

/**
 * `S` is a Drizzle batch item or a bound D1 statement (db/compiled.ts), whichever `commit` runs, or any unit of work
 * a `commit` turns into one batch (the AccountDO's receipts); `R` is what `commit` answers for each.
 */
export class GroupCommit<S, R = unknown> {
  private queue: Pending<S, R>[] = []
  private writing = false

  /** `commit` runs one atomic batch (db.batch, or the AccountDO's event-aware commit). */
  constructor(private readonly commit: (statements: Statements<S>) => Promise<readonly R[]>) {}

  write(statements: S[]): Promise<R[]> {
    const [first, ...rest] = statements
    if (!first) return Promise.resolve([])
    return new Promise((done, failed) => {
      this.queue.push({ statements: [first, ...rest], done, failed })
      if (this.writing) return
      // Not at once: the caller may be queueing more in this tick (a burst's items mapped through `write`).
      this.writing = true
      queueMicrotask(() => void this.drain())
    })
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const group: Pending<S, R>[] = []
        let size = 0
        while (this.queue.length > 0 && (group.length === 0 || size + this.queue[0]!.statements.length <= MAX_STATEMENTS)) {
          const next = this.queue.shift()!
          group.push(next)
          size += next.statements.length
        }
        await this.commitGroup(group)
      }
    } finally {
      this.writing = false
    }
  }

  private async commitGroup(group: Pending<S, R>[]): Promise<void> {
    const [first, ...rest] = group.flatMap((p) => p.statements)
    try {
      const results = await this.commit([first!, ...rest])
      let at = 0
      for (const p of group) {
        p.done(results.slice(at, at + p.statements.length))
        at += p.statements.length
      }
    } catch (err) {
      if (group.length === 1) return group[0]!.failed(err)
      for (const p of group) await this.commitGroup([p])
    }
  }
}
