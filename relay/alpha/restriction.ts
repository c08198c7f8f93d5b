/**
 * Restrictions alpha puts on a number that stays connected: the reach-out time lock it pushes or reports when asked
 * ("prevents outgoing messages and calls", with an end time), and a send refused with error 463 (no new chats). The
 * session is `restricted` while one applies and `connected` again once it lifts; replies may still go through. The
 * restriction is kept with the stored session (`relay/restriction`), so the relay that resumes the session after a
 * restart or a failover holds new chats back too instead of trying one (which would worsen the restriction).
 */
import type { ReachoutTimelockState } from '@whiskeysockets/baileys'
import { z } from 'zod'
import type { RiskReport, SessionState } from '../connector'
import type { DriverEntries } from './auth-store'
import type { AlphaSocket } from './socket'
import { PROBLEM_MESSAGES, SEND_ERROR_RESTRICTED } from './state'

/**
 * How long a 463 keeps the number restricted when alpha gives no end time. Baileys: retrying "counts as another
 * reach out and worsens the restriction", so new outreach pauses for a day, then the next send tells again.
 */
export const RESTRICTED_463_HOLD_MS = 24 * 60 * 60 * 1000

/** The stored session's entry, and its shape (zod: it comes back from the edge). */
const ENTRY = 'restriction'
const Kept = z.object({ source: z.enum(['timelock', 'send_refused']), until: z.number().nullable() })
type Active = z.infer<typeof Kept>

export type RestrictionDeps = {
  now(): number
  emit(state: SessionState): void
  isOpen(): boolean
  connectedState(): SessionState
  entries: DriverEntries
  /** Reports the restriction as a ban-risk signal (issue 25): set with its end, and lifted. */
  risk?(r: RiskReport): void
}

export type Restriction = {
  /** Takes up the restriction the stored session kept, if it is still in force (at start, before the socket opens). */
  restore(): void
  /**
   * The session (re)opened: report the restriction still in force, or `connected`; while one is, ask alpha for the time
   * lock again (its answer comes as an event), since a lift may have been missed while the session was down.
   */
  onOpen(sock: AlphaSocket): void
  onTimelock(lock: ReachoutTimelockState): void
  onSendRefused(errorCode: number, sock: AlphaSocket): void
  /**
   * Why a send to a new chat is refused now, or null when new chats are allowed. alpha's 463 means "cannot start new
   * chats; existing chats keep working" (Socket/messages-recv.js handleBadAck), and the time lock is on reach-outs.
   */
  newChatRefusal(): string | null
  /** Forget it in memory (stop, logout); what the stored session keeps stays for whoever resumes it. */
  reset(): void
}

export function makeRestriction(deps: RestrictionDeps): Restriction {
  let active: Active | null = null
  let liftTimer: ReturnType<typeof setTimeout> | null = null

  function set(next: Active | null) {
    if (liftTimer) clearTimeout(liftTimer)
    liftTimer = null
    active = next
    if (next?.until != null) liftTimer = setTimeout(lift, Math.max(0, next.until - deps.now()))
  }

  function report() {
    if (!active) return deps.emit(deps.connectedState())
    deps.emit({ state: 'restricted', problem: 'blocked_by_alpha', message: PROBLEM_MESSAGES.blocked_by_alpha, until: active.until })
  }

  function signal(source: Active['source'], on: boolean, until: number | null) {
    const name = source === 'timelock' ? 'reachout_timelock' : 'new_chat_refused'
    const detail = on
      ? source === 'timelock'
        ? 'alpha set a reach-out time lock: no new chats until it ends.'
        : 'alpha refused a new chat with error 463: the number may not start new chats for now.'
      : 'The restriction on new chats was lifted.'
    deps.risk?.({ signal: name, active: on, until: on ? until : null, detail })
  }

  function apply(source: Active['source'], until: number | null) {
    if (active && active.source !== source) signal(active.source, false, null)
    set({ source, until })
    signal(source, true, until)
    void deps.entries.write(ENTRY, JSON.stringify(active))
    if (deps.isOpen()) report()
  }

  function lift() {
    if (active) signal(active.source, false, null)
    set(null)
    void deps.entries.write(ENTRY, null)
    if (deps.isOpen()) report()
  }

  return {
    restore() {
      const text = deps.entries.read(ENTRY).get(ENTRY)
      if (text === undefined) return set(null)
      let parsed: unknown = null
      try {
        parsed = JSON.parse(text)
      } catch {
        // Unreadable: dropped below like any other invalid entry.
      }
      const kept = Kept.safeParse(parsed)
      if (kept.success && (kept.data.until === null || kept.data.until > deps.now())) return set(kept.data)
      set(null)
      void deps.entries.write(ENTRY, null)
    },
    onOpen(sock) {
      if (active?.until != null && active.until <= deps.now()) lift()
      report()
      if (active) void sock.fetchAccountReachoutTimelock().catch(() => undefined)
    },
    onTimelock(lock) {
      if (lock.isActive) return apply('timelock', lock.timeEnforcementEnds?.getTime() ?? null)
      // "Not locked" ends a time lock, not a 463: that one says new chats are refused whatever the lock reports.
      if (active?.source === 'timelock') lift()
    },
    onSendRefused(errorCode, sock) {
      if (errorCode !== SEND_ERROR_RESTRICTED) return
      if (active?.source === 'timelock' && (active.until === null || active.until > deps.now() + RESTRICTED_463_HOLD_MS)) return
      apply('send_refused', deps.now() + RESTRICTED_463_HOLD_MS)
      // Ask for the time lock too: when one is active its end time replaces our guess (the answer comes as an event).
      void sock.fetchAccountReachoutTimelock().catch(() => undefined)
    },
    newChatRefusal() {
      if (!active || (active.until !== null && active.until <= deps.now())) return null
      const why = active.source === 'send_refused' ? 'alpha refused a new chat with error 463' : 'alpha set a reach-out time lock'
      const until = active.until === null ? '' : ` until ${new Date(active.until).toISOString()}`
      return `account_restricted: this number may not start new chats${until} (${why}); replies to existing chats still go through`
    },
    reset() {
      set(null)
    },
  }
}
