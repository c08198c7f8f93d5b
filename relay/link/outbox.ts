/**
 * Reliable relay frames waiting for the edge's answer (an ack, a reject, or the session data of a load). They are
 * sent in order, sent again in the same order after every reconnect and after ACK_TIMEOUT_MS without an answer, and
 * settle when the answer comes. A frame with a coalesce key replaces an older unanswered one with the same key
 * (only the newest session state matters).
 */
import type { EdgeFrame, ReliableRelayFrame } from '../../schema/frames'

/** What the edge answers a reliable frame with. */
export type EdgeReply = Extract<EdgeFrame, { type: 'ack' | 'reject' | 'session_data' }>
/**
 * The local answer once the link is stopped for good (token refused or revoked, relay drained): the edge will never
 * answer, so nothing may wait for it (a session's stop saves its last state through the link, and a stop must end).
 * Never on the wire.
 */
export type LinkClosed = { type: 'link_closed' }
export type Reply = EdgeReply | LinkClosed

const LINK_CLOSED: LinkClosed = { type: 'link_closed' }

type Entry = {
  frame: ReliableRelayFrame
  coalesceKey: string | null
  sentAt: number | null
  waiters: Array<(reply: Reply) => void>
}

export class Outbox {
  private readonly entries = new Map<string, Entry>()
  private readonly emptyWaiters = new Set<() => void>()
  private closed = false

  get size(): number {
    return this.entries.size
  }

  /** Queues a frame; the promise settles with the edge's answer (never rejects: a lost link just delays it). */
  push(frame: ReliableRelayFrame, coalesceKey: string | null = null): Promise<Reply> {
    if (this.closed) return Promise.resolve(LINK_CLOSED)
    return new Promise((resolve) => {
      const waiters: Array<(reply: Reply) => void> = [resolve]
      if (coalesceKey) {
        for (const [id, e] of this.entries) {
          if (e.coalesceKey !== coalesceKey) continue
          // The newer frame answers for the older one too.
          waiters.push(...e.waiters)
          this.entries.delete(id)
        }
      }
      this.entries.set(frame.id, { frame, coalesceKey, sentAt: null, waiters })
    })
  }

  /**
   * Frames to send now, in queue order: never sent, or sent before `resendBefore` (ack timeout), keeping at most
   * `window` frames unanswered on the wire. The window is the relay's flow control: a burst waits here instead of
   * queueing at the edge, where it would delay heartbeats and every other session's frames.
   */
  due(resendBefore: number, window = Number.POSITIVE_INFINITY): ReliableRelayFrame[] {
    let inFlight = 0
    for (const e of this.entries.values()) if (e.sentAt !== null && e.sentAt >= resendBefore) inFlight++
    const out: ReliableRelayFrame[] = []
    for (const e of this.entries.values()) {
      if (inFlight + out.length >= window) break
      if (e.sentAt === null || e.sentAt < resendBefore) out.push(e.frame)
    }
    return out
  }

  /** The type of a frame still waiting for its answer (what a reject refused, for the log). */
  typeOf(id: string): ReliableRelayFrame['type'] | null {
    return this.entries.get(id)?.frame.type ?? null
  }

  markSent(id: string, at: number): void {
    const e = this.entries.get(id)
    if (e) e.sentAt = at
  }

  /** After a reconnect everything unanswered goes again. */
  markAllUnsent(): void {
    for (const e of this.entries.values()) e.sentAt = null
  }

  /** Settles the frames an answer is for; returns the earliest send time among them (the edge saw them after it). */
  settle(reply: EdgeReply): number | null {
    const ids = reply.type === 'ack' ? reply.ids : [reply.id]
    let sentAt: number | null = null
    for (const id of ids) {
      const e = this.entries.get(id)
      if (!e) continue
      this.entries.delete(id)
      if (e.sentAt !== null) sentAt = sentAt === null ? e.sentAt : Math.min(sentAt, e.sentAt)
      for (const w of e.waiters) w(reply)
    }
    if (this.entries.size === 0) for (const w of [...this.emptyWaiters]) w()
    return sentAt
  }

  /** The link stopped for good: every frame still waiting, and every later one, is answered `link_closed`. */
  close(): void {
    this.closed = true
    const waiting = [...this.entries.values()]
    this.entries.clear()
    for (const e of waiting) for (const w of e.waiters) w(LINK_CLOSED)
    for (const w of [...this.emptyWaiters]) w()
  }

  /** Resolves when nothing is waiting for an answer, or after `timeoutMs`. */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.entries.size === 0) return Promise.resolve(true)
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer)
        this.emptyWaiters.delete(onEmpty)
        resolve(ok)
      }
      const onEmpty = () => done(true)
      const timer = setTimeout(() => done(false), timeoutMs)
      this.emptyWaiters.add(onEmpty)
    })
  }
}
