/**
 * The edge's refusals of this relay's frames, counted for the logs and /healthz. One reject is routine (a session
 * moved); a relay that keeps being refused is misconfigured or out of step with the edge (issue 14 §1), and says so:
 * a warning per refusal, an error once the recent count reaches REJECTS_ALARM, and `degraded` health until it calms.
 */
import type { Logger } from 'pino'
import type { FrameOf } from '../../schema/frames'

/** Refusals within this window count as recent. */
export const REJECTS_WINDOW_MS = 5 * 60_000
/** This many recent refusals mean something is wrong, not a session moving. */
export const REJECTS_ALARM = 10

export type RejectStats = { total: number; recent: number; lastReason: string | null; lastAt: number | null; alarming: boolean }

export class RejectLog {
  private total = 0
  private times: number[] = []
  private last: { reason: string; at: number } | null = null
  private alarmed = false

  constructor(
    private readonly log: Logger,
    private readonly now: () => number = Date.now
  ) {}

  record(frame: FrameOf<'reject'>, refused: string | null): void {
    const at = this.now()
    this.total++
    this.times.push(at)
    this.prune(at)
    this.last = { reason: frame.reason, at }
    this.log.warn(
      { sid: frame.sid, fence: frame.fence ?? null, reason: frame.reason, frame: refused, recent_rejects: this.times.length },
      'the edge refused a frame'
    )
    if (this.times.length >= REJECTS_ALARM && !this.alarmed) {
      this.alarmed = true
      this.log.error(
        { recent_rejects: this.times.length, window_s: REJECTS_WINDOW_MS / 1000, reason: frame.reason },
        'the edge keeps refusing this relay’s frames'
      )
    }
  }

  stats(): RejectStats {
    this.prune(this.now())
    if (this.times.length < REJECTS_ALARM) this.alarmed = false
    return {
      total: this.total,
      recent: this.times.length,
      lastReason: this.last?.reason ?? null,
      lastAt: this.last?.at ?? null,
      alarming: this.times.length >= REJECTS_ALARM,
    }
  }

  private prune(at: number): void {
    while (this.times.length > 0 && this.times[0]! <= at - REJECTS_WINDOW_MS) this.times.shift()
  }
}
