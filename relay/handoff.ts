/**
 * What a driver handed to the relay core and the edge has not stored yet, for a driver whose upstream counts a
 * message delivered before the driver sees it (alpha: Baileys sends the delivery receipt, then emits the message;
 * messages-recv.js), so the upstream never sends it again: its stop must not return, and let the session move to
 * another relay, while such a message is still only in this process. `settled` waits for the batches still being
 * handled and for the edge's acks, up to a bound.
 */
import type { ConnectorEvents } from './connector'

/**
 * How long a stop waits for the edge to store what the upstream already counts delivered (a buffered backlog
 * included) before it lets the session go; past it, the rest still goes out but may arrive after the handover.
 */
export const STOP_HANDOFF_MS = 15_000

export type Handoff = {
  /** The connector's events with every inbound message and receipt counted until the edge stored it. */
  readonly events: ConnectorEvents
  /** Counts a batch of messages or receipts as pending until its handling is done (it emits them as it goes). */
  handling(work: Promise<unknown>): void
  /** Resolves once nothing handed over is waiting for the edge, or after `maxMs`; true when nothing was left. */
  settled(maxMs: number): Promise<boolean>
}

export function makeHandoff(events: ConnectorEvents): Handoff {
  let pending = 0
  let waiters: Array<() => void> = []

  /** Counts one more pending item; the returned function ends it (once), then calls `after`. */
  function tracked(after?: () => void): () => void {
    pending += 1
    let done = false
    return () => {
      if (done) return
      done = true
      pending -= 1
      after?.()
      if (pending === 0) for (const w of waiters.splice(0)) w()
    }
  }

  return {
    events: {
      ...events,
      inbound: (m) => events.inbound({ ...m, onCommitted: tracked(m.onCommitted) }),
      receipt: (r) => events.receipt({ ...r, onCommitted: tracked(r.onCommitted) }),
    },
    handling(work) {
      const done = tracked()
      void work.finally(done).catch(() => undefined)
    },
    async settled(maxMs) {
      if (pending === 0) return true
      let timer: ReturnType<typeof setTimeout> | undefined
      let wake: () => void = () => undefined
      await new Promise<void>((resolve) => {
        wake = resolve
        waiters.push(resolve)
        timer = setTimeout(resolve, maxMs)
      })
      clearTimeout(timer)
      waiters = waiters.filter((w) => w !== wake)
      return pending === 0
    },
  }
}
