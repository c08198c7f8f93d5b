/**
 * Keeps a beta session honest and alive. beta sends no event when a session is logged out or revoked elsewhere
 * (GramJS swallows AUTH_KEY_UNREGISTERED on its main sender, upstreams.md §2.8), and GramJS stops for good after its
 * last reconnect attempt (MTProtoSender: every later call would wait forever), so the relay asks: `updates.GetState`
 * every PROBE_INTERVAL_MS with a deadline, classified like any other error. A revoked session is found within a
 * minute. Failing probes are retried quickly and, after `failuresMax` in a row, the session is reported
 * unresponsive (within a minute of the outage); once GramJS gave up (`link()`: down) the client is rebuilt on the
 * same session with backoff, until a probe answers again and the session is reported recovered. Each answered probe
 * hands the server's update state on, so a gap nobody noticed is fetched within one interval.
 */
import type { Logger } from 'pino'
import { Api } from 'telegram'
import type { BetaClient } from './socket'
import { classifyError, type ErrorVerdict } from './state'

export type HealthTiming = {
  probeIntervalMs: number
  /** The next probe after a failed one. */
  probeRetryMs: number
  probeTimeoutMs: number
  /** Probes failing in a row (network, timeouts) before the session is reported unresponsive. */
  failuresMax: number
  /** Pauses between rebuilds of a client GramJS gave up on; the last repeats. */
  rebuildBackoffMs: readonly number[]
}
export const HEALTH_TIMING: HealthTiming = {
  probeIntervalMs: 30_000,
  probeRetryMs: 5_000,
  probeTimeoutMs: 10_000,
  failuresMax: 2,
  rebuildBackoffMs: [1_000, 2_000, 5_000, 10_000, 30_000],
}
export const PROBE_INTERVAL_MS = HEALTH_TIMING.probeIntervalMs

export type HealthDeps = {
  client(): BetaClient | null
  timing: HealthTiming
  log: Logger
  /** The session is gone or blocked: logged out, banned, duplicated. */
  onFatal(verdict: Extract<ErrorVerdict, { kind: 'banned' | 'logged_out' }>): void
  onUnresponsive(): void
  /** A probe answered after the session was reported unresponsive. */
  onRecovered(): void
  /** The server's update state, from every answered probe. */
  onState(state: Api.updates.State): void
}

export type Health = {
  stop(): void
  /** Probes now (the connection came back, or went). */
  kick(delayMs?: number): void
  readonly down: boolean
}

export function startHealth(deps: HealthDeps): Health {
  const t = deps.timing
  let failures = 0
  let rebuilds = 0
  let down = false
  let running = false
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | null = null

  function schedule(ms: number) {
    if (stopped) return
    if (timer) clearTimeout(timer)
    timer = setTimeout(() => void tick(), ms)
  }

  function answered(state: Api.updates.State | null) {
    failures = 0
    rebuilds = 0
    if (down) {
      down = false
      deps.onRecovered()
    }
    if (state) deps.onState(state)
    schedule(t.probeIntervalMs)
  }

  async function failed(client: BetaClient, why: string) {
    failures += 1
    deps.log.warn({ failures, why, link: client.link() }, 'beta: probe failed')
    if (failures >= t.failuresMax && !down) {
      down = true
      deps.onUnresponsive()
    }
    if (client.link() !== 'down') return schedule(t.probeRetryMs)
    // GramJS stopped trying: a new client on the same session, then the next probe after a growing pause.
    const pause = t.rebuildBackoffMs[Math.min(rebuilds, t.rebuildBackoffMs.length - 1)] ?? t.probeRetryMs
    rebuilds += 1
    try {
      await client.rebuild()
    } catch (err) {
      deps.log.warn({ err: err instanceof Error ? err.message : String(err), rebuilds }, 'beta: rebuilding the client failed')
    }
    schedule(Math.max(t.probeRetryMs, pause))
  }

  async function tick() {
    const client = deps.client()
    if (stopped || running || !client) return schedule(t.probeIntervalMs)
    running = true
    try {
      if (client.link() === 'down') return await failed(client, 'GramJS gave up reconnecting')
      const state = await client.invoke(new Api.updates.GetState(), undefined, { timeoutMs: t.probeTimeoutMs })
      answered(state instanceof Api.updates.State ? state : null)
    } catch (err) {
      const v = classifyError(err)
      if (v.kind === 'banned' || v.kind === 'logged_out') return deps.onFatal(v)
      // A flood wait or a stranger flag says the session is alive.
      if (v.kind === 'flood' || v.kind === 'stranger') return answered(null)
      await failed(client, v.message)
    } finally {
      running = false
    }
  }

  schedule(t.probeIntervalMs)
  return {
    stop() {
      stopped = true
      if (timer) clearTimeout(timer)
    },
    kick(delayMs = 0) {
      if (!running) schedule(delayMs)
    },
    get down() {
      return down
    },
  }
}
