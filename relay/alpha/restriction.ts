/**
 * Restrictions alpha puts on a number that stays connected: the reach-out time lock it pushes or reports when asked
 * ("prevents outgoing messages and calls", with an end time), and a send refused with error 463 (no new chats). The
 * session is `restricted` while one applies and `connected` again once it lifts; replies may still go through.
 */
import type { ReachoutTimelockState } from '@whiskeysockets/baileys'
import type { SessionState } from '../connector'
import type { AlphaSocket } from './socket'
import { PROBLEM_MESSAGES, SEND_ERROR_RESTRICTED } from './state'

/**
 * How long a 463 keeps the number restricted when alpha gives no end time. Baileys: retrying "counts as another
 * reach out and worsens the restriction", so new outreach pauses for a day, then the next send tells again.
 */
export const RESTRICTED_463_HOLD_MS = 24 * 60 * 60 * 1000

export type RestrictionDeps = {
  now(): number
  emit(state: SessionState): void
  isOpen(): boolean
  connectedState(): SessionState
}

export type Restriction = {
  /** The session (re)opened: report the restriction still in force, or `connected`. */
  onOpen(): void
  onTimelock(lock: ReachoutTimelockState): void
  onSendRefused(errorCode: number, sock: AlphaSocket): void
  /**
   * Why a send to a new chat is refused now, or null when new chats are allowed. alpha's 463 means "cannot start new
   * chats; existing chats keep working" (Socket/messages-recv.js handleBadAck), and the time lock is on reach-outs.
   */
  newChatRefusal(): string | null
  /** Forget everything (stop, logout). */
  reset(): void
}

export function makeRestriction(deps: RestrictionDeps): Restriction {
  let active: { source: 'timelock' | 'send_refused'; until: number | null } | null = null
  let liftTimer: ReturnType<typeof setTimeout> | null = null

  function report() {
    if (!active) return deps.emit(deps.connectedState())
    deps.emit({ state: 'restricted', problem: 'blocked_by_alpha', message: PROBLEM_MESSAGES.blocked_by_alpha, until: active.until })
  }

  function apply(source: 'timelock' | 'send_refused', until: number | null) {
    if (liftTimer) clearTimeout(liftTimer)
    liftTimer = null
    active = { source, until }
    if (until !== null) liftTimer = setTimeout(lift, Math.max(0, until - deps.now()))
    if (deps.isOpen()) report()
  }

  function lift() {
    if (liftTimer) clearTimeout(liftTimer)
    liftTimer = null
    active = null
    if (deps.isOpen()) report()
  }

  return {
    onOpen() {
      if (active?.until != null && active.until <= deps.now()) active = null
      report()
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
      if (liftTimer) clearTimeout(liftTimer)
      liftTimer = null
      active = null
    },
  }
}
