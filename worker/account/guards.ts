/**
 * The send guards of spec part 8 as plain functions of state and time. The AccountDO runs `checkSend` and the
 * counter update with no await in between, so each decision and its bookkeeping are one atomic step.
 * A refused send changes no counter.
 */
import { z } from 'zod'
import type { Plan } from '../plans'
import { secondsToNextUtcDay, utcDay } from '../lib/time'
import { hash53 } from '../lib/hash53'

export const LOOP_GUARD_SENDS = 3
export const OPENER_BURST_MAX = 5
export const OPENER_WINDOW_MS = 30 * 60_000

export const LIMITS = ['daily_send_cap', 'new_contact_cap'] as const
export type LimitName = (typeof LIMITS)[number]

export const Counters = z.object({
  day: z.string(),
  sends: z.number().int(),
  newContacts: z.number().int(),
  /** Limits whose account.limit_reached event already fired on `day`. */
  fired: z.array(z.enum(LIMITS)),
})
export type Counters = z.infer<typeof Counters>

export type ContactGuard = { hasInbound: boolean; sendsSinceInbound: number; firstSentAt: number | null }
export const EMPTY_GUARD: ContactGuard = { hasInbound: false, sendsSinceInbound: 0, firstSentAt: null }

/** Today's counters: yesterday's (or none) start over at UTC midnight. */
export function countersFor(stored: Counters | undefined, now: number): Counters {
  const day = utcDay(now)
  return stored && stored.day === day ? stored : { day, sends: 0, newContacts: 0, fired: [] }
}

export type Refusal = {
  status: 403 | 429
  code: 'account_suspended' | 'daily_send_cap' | 'new_contact_cap' | 'account_at_risk' | 'loop_guard' | 'opener_burst'
  message: string
  retryAfterS?: number
  /** The daily limit behind this refusal (fires account.limit_reached once a day). */
  limit?: LimitName
  /** An opener burst suspends the tenant. */
  suspend?: true
}

export type SendCheckInput = {
  now: number
  plan: Plan
  suspended: boolean
  counters: Counters
  contact: ContactGuard
  /** Today's new-contact allowance: the plan cap, or less on an alpha number's warm-up days. */
  newContactAllowance: number
  rampDay: number | null
  /** How many times this exact first message already went to never-written people in the window. */
  sameOpenerCount: number
  /**
   * A ban-risk signal in force on the account (account/risk.ts), or null: while one is, new contacts are refused
   * (`account_at_risk`, retry after the signal's end when the network gave one); replies still go out.
   */
  risk: { signal: string; until: number | null } | null
}

export type SendCheck = { ok: true; newContact: boolean } | { ok: false; refusal: Refusal }

/**
 * A new contact is a person who never wrote to this account and was never messaged by it before; that first
 * message is an opener. Replies to people who wrote first are never new contacts.
 */
export function isNewContact(g: ContactGuard): boolean {
  return !g.hasInbound && g.firstSentAt === null
}

export function checkSend(i: SendCheckInput): SendCheck {
  const retryAfterS = secondsToNextUtcDay(i.now)
  const refuse = (r: Refusal): SendCheck => ({ ok: false, refusal: r })
  if (i.suspended) {
    return refuse({ status: 403, code: 'account_suspended', message: 'Sending is suspended until the service reviews this account' })
  }
  if (i.counters.sends >= i.plan.sendsPerDay) {
    return refuse({
      status: 429,
      code: 'daily_send_cap',
      message: `The daily cap of ${i.plan.sendsPerDay} sends is reached; sending resumes at the next UTC day`,
      retryAfterS,
      limit: 'daily_send_cap',
    })
  }
  const newContact = isNewContact(i.contact)
  if (newContact && i.risk) {
    const until = i.risk.until
    return refuse({
      status: 429,
      code: 'account_at_risk',
      message: `The network reported ${i.risk.signal}${until === null ? '' : ` until ${new Date(until).toISOString()}`}: new contacts are paused while it lasts; replies to people who wrote still work`,
      ...(until === null ? {} : { retryAfterS: Math.max(1, Math.ceil((until - i.now) / 1000)) }),
    })
  }
  if (newContact && i.counters.newContacts >= i.newContactAllowance) {
    const warmingUp = i.rampDay !== null && i.newContactAllowance < i.plan.newContactsPerDay
    return refuse({
      status: 429,
      code: 'new_contact_cap',
      message: warmingUp
        ? `This number is on warm-up day ${i.rampDay}: it may message ${i.newContactAllowance} new contact(s) today; replies are not limited`
        : `The daily cap of ${i.newContactAllowance} new contacts is reached; replies to people who wrote first still work`,
      retryAfterS,
      limit: 'new_contact_cap',
    })
  }
  if (i.contact.sendsSinceInbound >= LOOP_GUARD_SENDS) {
    return refuse({
      status: 429,
      code: 'loop_guard',
      message: `${LOOP_GUARD_SENDS} messages were already sent to this person since they last wrote; wait for their reply`,
    })
  }
  if (newContact && i.sameOpenerCount >= OPENER_BURST_MAX) {
    return refuse({
      status: 429,
      code: 'opener_burst',
      message: `The same first message went to more than ${OPENER_BURST_MAX} people who never wrote within 30 minutes; sending is suspended until the service reviews it`,
      suspend: true,
    })
  }
  return { ok: true, newContact }
}

/** Counters after an accepted send. */
export function countSend(c: Counters, newContact: boolean): Counters {
  return { ...c, sends: c.sends + 1, newContacts: c.newContacts + (newContact ? 1 : 0) }
}

/** What one accepted send added to the counters, so a send whose commit fails takes back exactly that. */
export type SendContribution = { day: string; newContact: boolean; fired: LimitName[] }

/**
 * The counters after a counted send's commit failed: its own send, its new contact (unless a later send to the
 * same person now relies on it, see `giveBackGuard`) and the limits it fired (their events were in the failed
 * batch, so the next send that reaches them fires them again). Sends accepted meanwhile stay counted; after a UTC
 * midnight there is nothing to give back, the new day never counted it.
 */
export function giveBackCounters(current: Counters, mine: SendContribution): Counters {
  if (current.day !== mine.day) return current
  return {
    ...current,
    sends: Math.max(0, current.sends - 1),
    newContacts: Math.max(0, current.newContacts - (mine.newContact ? 1 : 0)),
    fired: current.fired.filter((l) => !mine.fired.includes(l)),
  }
}

/**
 * The person's loop-guard state after a counted send to them failed to commit, from the state as it is now:
 * their count drops by this send unless they wrote since (which restarted it without this send); a person who
 * was new only through this send is new again, unless a later send to them was accepted as a follow-up of it,
 * in which case that send is now their opener and keeps the new-contact slot (`keepsNewContact`).
 */
export function giveBackGuard(
  current: ContactGuard,
  mine: { newContact: boolean },
  since: { laterSends: number; wroteSince: boolean }
): { guard: ContactGuard; keepsNewContact: boolean } {
  const keepsNewContact = mine.newContact && since.laterSends > 0
  return {
    guard: {
      ...current,
      sendsSinceInbound: since.wroteSince ? current.sendsSinceInbound : Math.max(0, current.sendsSinceInbound - 1),
      firstSentAt: mine.newContact && !keepsNewContact ? null : current.firstSentAt,
    },
    keepsNewContact,
  }
}

/** Limits that are reached (by this send's counters) or were just refused, and have not fired today. */
export function limitsToFire(c: Counters, plan: Plan, allowance: number, refusedBy?: LimitName): LimitName[] {
  const hit = new Set<LimitName>()
  if (refusedBy) hit.add(refusedBy)
  if (c.sends >= plan.sendsPerDay) hit.add('daily_send_cap')
  if (c.newContacts >= allowance && allowance > 0) hit.add('new_contact_cap')
  return [...hit].filter((l) => !c.fired.includes(l))
}

/** Normalises an opener so trivial variations (case, spacing) still count as the same message. */
export function openerKey(text: string): string {
  const norm = text.toLowerCase().replace(/\s+/g, ' ').trim()
  // Collisions only merge two openers' counts, which errs on the safe side.
  return hash53(norm).toString(36)
}
