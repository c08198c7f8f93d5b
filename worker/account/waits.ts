/**
 * Open long-poll waits of one account, in memory (a wait is a live request; if the object is evicted the request
 * dies with it and the client re-polls). At most WAIT_SLOTS_PER_ACCOUNT are open; a slot frees when the wait
 * returns, times out, or its client goes away (request.signal).
 *
 * A ticket is registered before the caller's first D1 read, so a message committed during that read still wakes
 * it: `next()` resolves at once when a wake arrived since the previous call.
 */
import type { z } from 'zod'
import type { Message } from '../../schema/api/messages'

export const WAIT_SLOTS_PER_ACCOUNT = 2

/**
 * A committed inbound message as waits hand it out: its seq and its wire shape (typed from the schema, not db/wire,
 * so scripts that read this module's constants stay free of the Worker's D1 types).
 */
export type CommittedInbound = { seq: number; message: z.infer<typeof Message> }

/** `closed`: the tenant began moving to another shard; the wait is answered and its client told to repeat it. */
export type WaitOutcome = 'woken' | 'timeout' | 'aborted' | 'closed'

export class WaitTicket<T> {
  private pending = false
  private closed = false

  /** A move of the tenant began: the wait is answered `closed` (and every later `next()` too). */
  close(): void {
    this.closed = true
    const r = this.resolve
    this.resolve = null
    r?.('closed')
  }

  /** Whether a move closed this wait. */
  isClosed(): boolean {
    return this.closed
  }

  private rows: T[] = []
  private stale = false

  /** Rows the object committed since the last `take()`, and whether a commit's rows were not learnt (re-read D1). */
  take(): { rows: T[]; stale: boolean } {
    const got = { rows: this.rows, stale: this.stale }
    this.rows = []
    this.stale = false
    return got
  }

  handOff(rows: readonly T[]): void {
    this.rows.push(...rows)
    this.wake()
  }

  /** A commit whose rows the object does not know (a failed or ambiguous batch): the wait must read D1. */
  unsure(): void {
    this.stale = true
    this.wake()
  }

  private resolve: ((o: WaitOutcome) => void) | null = null

  private wake(): void {
    if (this.resolve) {
      const r = this.resolve
      this.resolve = null
      r('woken')
    } else {
      this.pending = true
    }
  }

  /** Resolves on the next wake (or at once if one is pending), at `deadline`, or when `signal` aborts. */
  next(deadline: number, signal: AbortSignal): Promise<WaitOutcome> {
    if (this.closed) return Promise.resolve('closed')
    if (this.pending) {
      this.pending = false
      return Promise.resolve('woken')
    }
    if (signal.aborted) return Promise.resolve('aborted')
    return new Promise<WaitOutcome>((resolve) => {
      const finish = (o: WaitOutcome) => {
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        this.resolve = null
        resolve(o)
      }
      const onAbort = () => finish('aborted')
      const timer = setTimeout(() => finish('timeout'), Math.max(0, deadline - Date.now()))
      signal.addEventListener('abort', onAbort, { once: true })
      this.resolve = finish
    })
  }
}

export class WaitRoom<T = unknown> {
  private readonly tickets = new Set<WaitTicket<T>>()

  get open(): number {
    return this.tickets.size
  }

  /** A ticket, or null when every slot is taken. */
  enter(): WaitTicket<T> | null {
    if (this.tickets.size >= WAIT_SLOTS_PER_ACCOUNT) return null
    const t = new WaitTicket<T>()
    this.tickets.add(t)
    return t
  }

  leave(t: WaitTicket<T>): void {
    this.tickets.delete(t)
  }

  /** The object committed these inbound rows (in commit order): every open wait gets them. */
  committed(rows: readonly T[]): void {
    for (const t of this.tickets) t.handOff(rows)
  }

  /** The object committed inbound rows it could not read back: every open wait reads D1 again. */
  unsure(): void {
    for (const t of this.tickets) t.unsure()
  }

  /** Answers every open wait with `closed` (a move began). */
  closeAll(): void {
    for (const t of this.tickets) t.close()
  }
}
