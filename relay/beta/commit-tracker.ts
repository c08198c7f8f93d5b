/**
 * Which update state a beta session may save (catch-up.ts): each applied update opens a unit with the state after
 * it, and the unit is done when the edge has stored every message and receipt it produced (`onCommitted`, called by
 * the relay core on the edge's ack). The saved state is the newest one with every unit up to it done, so a relay that
 * dies resumes from what the edge has, never past it; at most one write per `persistEveryMs`.
 */
import type { Logger } from 'pino'
import type { ConnectorEvents, InboundMessage, Receipt } from '../connector'

/** beta's update state (updates.State without the unread count). */
export type UpdateState = { pts: number; qts: number; date: number; seq: number }
/** The inbound and receipt events of one update, as handle-events reports them. */
export type UpdateEvents = Pick<ConnectorEvents, 'inbound' | 'receipt'>

export type CommitTrackerDeps = { events: UpdateEvents; save(raw: string): Promise<void>; log: Logger; persistEveryMs: number }

export type CommitUnit = { events: UpdateEvents; close(): void }

export function commitTracker(deps: CommitTrackerDeps) {
  type Unit = { after: UpdateState; open: number; closed: boolean }
  const units: Unit[] = []
  let committed: UpdateState | null = null
  let saved: string | null = null
  let timer: ReturnType<typeof setTimeout> | null = null
  let writes: Promise<void> = Promise.resolve()
  /** Stopped: only an explicit flush writes (a late acknowledgement after stop must not write behind a wipe). */
  let closed = false

  function settle() {
    let moved = false
    while (units[0]?.closed && units[0].open === 0) {
      committed = units.shift()!.after
      moved = true
    }
    if (moved && !timer && !closed) timer = setTimeout(() => void flush(), deps.persistEveryMs)
  }

  function flush(): Promise<void> {
    if (timer) clearTimeout(timer)
    timer = null
    const raw = committed ? JSON.stringify(committed) : null
    if (raw && raw !== saved) {
      saved = raw
      writes = writes.then(() => deps.save(raw)).catch((err: unknown) => deps.log.warn({ err: String(err) }, 'beta: saving the update state failed'))
    }
    return writes
  }

  return {
    loaded(s: UpdateState | null) {
      committed = s
      saved = s ? JSON.stringify(s) : null
      units.length = 0
      closed = false
      if (timer) clearTimeout(timer)
      timer = null
    },
    close() {
      closed = true
      return flush()
    },
    reopen() {
      closed = false
    },
    open(after: UpdateState): CommitUnit {
      const unit: Unit = { after, open: 0, closed: false }
      units.push(unit)
      const done = () => {
        unit.open -= 1
        settle()
      }
      const events: UpdateEvents = {
        inbound(m: InboundMessage) {
          unit.open += 1
          deps.events.inbound({ ...m, onCommitted: () => (m.onCommitted?.(), done()) })
        },
        receipt(r: Receipt) {
          unit.open += 1
          deps.events.receipt({ ...r, onCommitted: () => (r.onCommitted?.(), done()) })
        },
      }
      return {
        events,
        close() {
          unit.closed = true
          settle()
        },
      }
    },
    flush,
  }
}
