/**
 * Bringing a beta session up, and up again: connect (or, once GramJS gave up, rebuild the client), then resume the
 * stored session or begin the login. A network that is not there is reported (`unresponsive`) and tried again after
 * the health loop's growing pauses, never given up: a failed connect at start used to be the end of the session
 * (issue 21), and GramJS's `connect()` answers false rather than throwing when its attempts run out.
 */
import type { Logger } from 'pino'
import type { BetaClient } from './socket'

export type BringUpDeps = {
  client(): BetaClient | null
  /** False once the session stopped or halted: nothing more is tried. */
  active(): boolean
  /** Pauses between attempts; the last repeats (health.ts HealthTiming.rebuildBackoffMs). */
  backoffMs: readonly number[]
  log: Logger
  /** Runs a step on the connector's queue. */
  enqueue(step: () => Promise<void>): void
  onUnresponsive(): void
  /** The client is connected: resume the stored session, or begin the login. */
  onConnected(client: BetaClient): Promise<void>
}

export type BringUp = {
  /** The first attempt (connect). */
  start(): Promise<void>
  /** Tries again after the next pause, rebuilding the client when GramJS gave up. */
  retry(): void
  /** The session is live: the pauses start small again. */
  reset(): void
  stop(): void
}

export function makeBringUp(deps: BringUpDeps): BringUp {
  let attempts = 0
  let timer: ReturnType<typeof setTimeout> | null = null

  async function attempt(rebuild: boolean): Promise<void> {
    const c = deps.client()
    if (!c || !deps.active()) return
    try {
      await (rebuild ? c.rebuild() : c.connect())
    } catch (err) {
      deps.log.warn({ err: err instanceof Error ? err.message : String(err), attempts }, 'beta: connecting failed; trying again')
      deps.onUnresponsive()
      return later(true)
    }
    await deps.onConnected(c)
  }

  function later(rebuild: boolean) {
    const pause = deps.backoffMs[Math.min(attempts, deps.backoffMs.length - 1)] ?? 1_000
    attempts += 1
    if (timer) clearTimeout(timer)
    timer = setTimeout(() => {
      timer = null
      deps.enqueue(() => attempt(rebuild))
    }, pause)
  }

  return {
    start: () => attempt(false),
    retry: () => later(deps.client()?.link() === 'down'),
    reset() {
      attempts = 0
    },
    stop() {
      if (timer) clearTimeout(timer)
      timer = null
    },
  }
}
