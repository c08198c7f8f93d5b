/** UTC-day arithmetic. Every daily limit resets at UTC midnight; callers pass `now` so tests can move the clock. */
export const DAY_MS = 86_400_000

/** The last day named, so the calls of one day (every request asks) format its name once. */
let lastDay = { number: Number.NaN, name: '' }

/** The UTC day of `now` as `YYYY-MM-DD`. */
export function utcDay(now: number): string {
  const number = Math.floor(now / DAY_MS)
  if (number !== lastDay.number) lastDay = { number, name: new Date(number * DAY_MS).toISOString().slice(0, 10) }
  return lastDay.name
}

/** Days since the Unix epoch (UTC), for counting days between two instants. */
export function dayNumber(now: number): number {
  return Math.floor(now / DAY_MS)
}

/** Whole seconds until the next UTC midnight, at least 1: the `retry_after_s` of every daily-limit refusal. */
export function secondsToNextUtcDay(now: number): number {
  return Math.max(1, Math.ceil(((dayNumber(now) + 1) * DAY_MS - now) / 1000))
}

/** The last instant formatted: one message's wire shape, event payload and headers name the same instant. */
let lastIso = { ms: Number.NaN, text: '' }

export function iso(ms: number): string {
  if (ms !== lastIso.ms) lastIso = { ms, text: new Date(ms).toISOString() }
  return lastIso.text
}

export function isoOrNull(ms: number | null | undefined): string | null {
  return ms == null ? null : iso(ms)
}
