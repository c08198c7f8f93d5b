/**
 * The alpha warm-up ramp (spec part 8). Exact rule: `ramp_day` counts the UTC days on which the number was
 * connected at some moment, starting at 1 (also while it is still connecting). On ramp days 1 and 2 it may message
 * 0 new contacts; from day 3 the allowance is `ramp_day - 2`, capped by the plan (day 3 → 1, … day 12 → 10).
 * Replies to people who wrote first are never limited by it.
 */
import { z } from 'zod'
import { dayNumber } from '../lib/time'

export const RAMP_SILENT_DAYS = 2

export const Ramp = z.object({
  /** Active days counted up to and including `lastDay`. */
  countedDays: z.number().int(),
  lastDay: z.number().int().nullable(),
  connected: z.boolean(),
})
export type Ramp = z.infer<typeof Ramp>

export const NEW_RAMP: Ramp = { countedDays: 0, lastDay: null, connected: false }

/** Active days so far; while connected, every day since `lastDay` counts (the number stayed connected through them). */
export function activeDays(r: Ramp, now: number): number {
  const today = dayNumber(now)
  if (!r.connected || r.lastDay === null) return r.countedDays
  return r.countedDays + Math.max(0, today - r.lastDay)
}

export function rampDay(r: Ramp, now: number): number {
  return Math.max(1, activeDays(r, now))
}

export function rampAllowance(r: Ramp, now: number, planCap: number): number {
  return Math.min(planCap, Math.max(0, rampDay(r, now) - RAMP_SILENT_DAYS))
}

export function rampConnected(r: Ramp, now: number): Ramp {
  if (r.connected) return r
  const today = dayNumber(now)
  const counted = r.lastDay === today ? r.countedDays : r.countedDays + 1
  return { countedDays: counted, lastDay: today, connected: true }
}

export function rampDisconnected(r: Ramp, now: number): Ramp {
  if (!r.connected) return r
  return { countedDays: activeDays(r, now), lastDay: Math.max(r.lastDay ?? 0, dayNumber(now)), connected: false }
}
