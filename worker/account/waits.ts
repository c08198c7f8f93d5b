/**
 * Open long-poll waits of one account, in memory (a wait is a live request; if the object is evicted the request
 * dies with it and the client re-polls). At most WAIT_SLOTS_PER_ACCOUNT are open; a slot frees when the wait
 * returns, times out, or its client goes away (request.signal).
 *
 * A ticket is registered before the caller's first D1 read, so a message committed during that read still wakes
 * it: `next()` resolves at once when a wake arrived since the previous call.
 */
export const WAIT_SLOTS_PER_ACCOUNT = 2

/** `closed`: the tenant began moving to another shard; the wait is answered and its client told to repeat it. */
export type WaitOutcome = 'woken' | 'timeout' | 'aborted' | 'closed'

export class WaitTicket {
  private pending = false
  private closed = false
  private resolve: ((o: WaitOutcome) => void) | null = null

  close(): void {
    this.closed = true
    const r = this.resolve
    this.resolve = null
    r?.('closed')
  }

  wake(): void {
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

export class WaitRoom {
  private readonly tickets = new Set<WaitTicket>()

  get open(): number {
    return this.tickets.size
  }

  /** A ticket, or null when every slot is taken. */
  enter(): WaitTicket | null {
    if (this.tickets.size >= WAIT_SLOTS_PER_ACCOUNT) return null
    const t = new WaitTicket()
    this.tickets.add(t)
    return t
  }

  leave(t: WaitTicket): void {
    this.tickets.delete(t)
  }

  wakeAll(): void {
    for (const t of this.tickets) t.wake()
  }

  /** Answers every open wait with `closed` (a move began). */
  closeAll(): void {
    for (const t of this.tickets) t.close()
  }
}
