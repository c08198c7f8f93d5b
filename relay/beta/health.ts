/**
 * beta sends no event when a session is logged out or revoked elsewhere (GramJS swallows AUTH_KEY_UNREGISTERED on its
 * main sender, upstreams.md §2.8), so the relay asks: `updates.GetState` every PROBE_INTERVAL_MS, classified like any
 * other error. A revoked session is found within a minute; a string of failures means the upstream is unreachable.
 */
import { Api } from 'telegram'
import type { BetaClient } from './socket'
import { classifyError, type ErrorVerdict } from './state'

export const PROBE_INTERVAL_MS = 30_000
/** Probes failing in a row (network, timeouts) before the session is reported unresponsive. */
export const PROBE_FAILURES_MAX = 4

export type ProbeDeps = {
  client(): BetaClient | null
  /** The session is gone or blocked: logged out, banned, duplicated. */
  onFatal(verdict: Extract<ErrorVerdict, { kind: 'banned' | 'logged_out' }>): void
  onUnresponsive(): void
  /** A probe answered after the session was reported unresponsive. */
  onRecovered(): void
}

export function startProbe(deps: ProbeDeps): () => void {
  let failures = 0
  let running = false
  const timer = setInterval(() => {
    if (running) return
    const client = deps.client()
    if (!client) return
    running = true
    void client
      .invoke(new Api.updates.GetState())
      .then(() => {
        if (failures >= PROBE_FAILURES_MAX) deps.onRecovered()
        failures = 0
      })
      .catch((err: unknown) => {
        const v = classifyError(err)
        if (v.kind === 'banned' || v.kind === 'logged_out') return deps.onFatal(v)
        // A flood wait or a stranger flag says the session is alive.
        if (v.kind === 'flood' || v.kind === 'stranger') return
        failures += 1
        if (failures === PROBE_FAILURES_MAX) deps.onUnresponsive()
      })
      .finally(() => {
        running = false
      })
  }, PROBE_INTERVAL_MS)
  return () => clearInterval(timer)
}
