/**
 * The delivery rules as pure functions: what counts as success, how a failure is classified, when the next retry
 * is due (spec 6: 1 min, 5 min, 30 min, 2 h; Retry-After honoured on 429/503 up to the next step), when a URL is
 * paused (15 consecutive failures over at least an hour, or at once on 410 Gone), and how long the log is kept.
 */
import type { FailureType } from '../../schema/api/webhooks'

/** Delays before retry 1, 2, 3 and 4; a delivery gets at most 1 + RETRY_DELAYS_MS.length attempts. */
export const RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000] as const

/** The delivery log and the events behind replay are kept this long (the sweeper prunes older rows). */
export const RETENTION_MS = 7 * 86_400_000

/** A URL is paused when its run of consecutive failures reaches this length... */
export const PAUSE_AFTER_CONSECUTIVE_FAILURES = 15
/** ...and the first failure of that run is at least this old, so a short burst (a deploy) never pauses it. */
export const PAUSE_MIN_FAILING_MS = 3_600_000

export type AttemptOutcome =
  | { ok: true; statusCode: number; durationMs: number }
  | {
      ok: false
      statusCode: number | null
      failureType: FailureType
      message: string
      durationMs: number
      /** The receiver's Retry-After (429/503), in ms from now. */
      retryAfterMs?: number
      /** 410 Gone: the receiver asks us to stop; the URL is paused at once. */
      gone?: boolean
      /** Nothing will change without a new URL (the SSRF guard refused it): no retry. */
      final?: boolean
    }

/** The failure type of an HTTP answer that is not 2xx (spec 2, `last_failure.failure_type`). */
export function failureTypeForStatus(status: number): FailureType {
  if (status === 408 || status === 429 || status >= 500) return 'temporary'
  if (status >= 400 && status < 500) return 'permanent'
  // The contract's classes: permanent is a 4xx, temporary a 5xx (and 408, 429). A redirect (never followed) or any
  // other non-2xx is neither, so it is `unknown`; it fails and is retried like every failure.
  return 'unknown'
}

/** Retry-After as delta-seconds or an HTTP date, in ms from `now`; undefined when absent or unparsable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (!value) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const at = Date.parse(trimmed)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/**
 * When the next attempt is due after the failed attempt number `step` of the current cycle (1-based), or null
 * when no retry follows. A Retry-After longer than the scheduled delay is honoured up to the step after it.
 */
export function nextAttemptAt(step: number, outcome: Extract<AttemptOutcome, { ok: false }>, retriesEnabled: boolean, now: number): number | null {
  if (!retriesEnabled || outcome.gone || outcome.final) return null
  const delay = RETRY_DELAYS_MS[step - 1]
  if (delay === undefined) return null
  const cap = RETRY_DELAYS_MS[step] ?? delay
  const wanted = outcome.retryAfterMs ?? 0
  return now + Math.max(delay, Math.min(wanted, cap))
}
