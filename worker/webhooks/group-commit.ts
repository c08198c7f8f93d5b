/**
 * Group commit for attempt outcomes: the first outcome is written at once; outcomes that finish while a write is
 * running share the next D1 batch. Under load that turns one write per delivery into one per burst, without
 * delaying a lone delivery.
 */
import type { BatchItem } from 'drizzle-orm/batch'
import type { Db } from '../db/client'

/** Statements per D1 batch. */
const MAX_STATEMENTS = 100

type Pending = { statements: BatchItem<'sqlite'>[]; done: () => void; failed: (err: unknown) => void }

export class GroupCommit {
  private queue: Pending[] = []
  private writing = false

  constructor(private readonly db: Db) {}

  write(statements: BatchItem<'sqlite'>[]): Promise<void> {
    return new Promise((done, failed) => {
      this.queue.push({ statements, done, failed })
      if (!this.writing) void this.drain()
    })
  }

  private async drain(): Promise<void> {
    this.writing = true
    try {
      while (this.queue.length > 0) {
        const group: Pending[] = []
        let size = 0
        while (this.queue.length > 0 && (group.length === 0 || size + this.queue[0]!.statements.length <= MAX_STATEMENTS)) {
          const next = this.queue.shift()!
          group.push(next)
          size += next.statements.length
        }
        const [first, ...rest] = group.flatMap((p) => p.statements)
        try {
          if (first) await this.db.batch([first, ...rest])
          for (const p of group) p.done()
        } catch (err) {
          for (const p of group) p.failed(err)
        }
      }
    } finally {
      this.writing = false
    }
  }
}
