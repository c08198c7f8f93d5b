import { describe, expect, it } from 'vitest'
import {
  checkSend,
  countersFor,
  countSend,
  EMPTY_GUARD,
  giveBackCounters,
  giveBackGuard,
  isNewContact,
  limitsToFire,
  LOOP_GUARD_SENDS,
  OPENER_BURST_MAX,
  openerKey,
  type Counters,
  type SendCheckInput,
} from '../../../worker/account/guards'
import { PLANS } from '../../../worker/plans'

const NOW = Date.parse('2026-05-10T22:00:00.000Z')
const plan = PLANS.free
const fresh: Counters = { day: '2026-05-10', sends: 0, newContacts: 0, fired: [] }
const wroteFirst = { hasInbound: true, sendsSinceInbound: 0, firstSentAt: null }

function input(over: Partial<SendCheckInput> = {}): SendCheckInput {
  return {
    now: NOW,
    plan,
    suspended: false,
    counters: fresh,
    contact: EMPTY_GUARD,
    newContactAllowance: 10,
    rampDay: null,
    sameOpenerCount: 0,
    risk: null,
    ...over,
  }
}

function refusal(i: SendCheckInput) {
  const r = checkSend(i)
  if (r.ok) throw new Error('the send was accepted')
  return r.refusal
}

describe('countersFor', () => {
  it("keeps today's counters and starts over on a new UTC day", () => {
    const today = { ...fresh, sends: 7, fired: ['daily_send_cap' as const] }
    expect(countersFor(today, NOW)).toBe(today)
    expect(countersFor(today, Date.parse('2026-05-11T00:00:00.000Z'))).toEqual({ day: '2026-05-11', sends: 0, newContacts: 0, fired: [] })
    expect(countersFor(undefined, NOW)).toEqual(fresh)
  })
})

describe('isNewContact', () => {
  it('is a person who never wrote and was never messaged', () => {
    expect(isNewContact(EMPTY_GUARD)).toBe(true)
    expect(isNewContact(wroteFirst)).toBe(false)
    expect(isNewContact({ hasInbound: false, sendsSinceInbound: 1, firstSentAt: NOW - 1 })).toBe(false)
  })
})

describe('checkSend', () => {
  it('accepts a first message to a new contact and says it is one', () => {
    expect(checkSend(input())).toEqual({ ok: true, newContact: true })
    expect(checkSend(input({ contact: wroteFirst }))).toEqual({ ok: true, newContact: false })
  })

  it('refuses everything with account_suspended (403) while suspended', () => {
    const r = refusal(input({ suspended: true, contact: wroteFirst }))
    expect(r).toMatchObject({ status: 403, code: 'account_suspended' })
    expect(r.retryAfterS).toBeUndefined()
  })

  it('accepts the 50th send of a UTC day and refuses the 51st with daily_send_cap and retry_after_s to midnight', () => {
    expect(checkSend(input({ counters: { ...fresh, sends: 49 }, contact: wroteFirst })).ok).toBe(true)
    const r = refusal(input({ counters: { ...fresh, sends: 50 }, contact: wroteFirst }))
    expect(r).toMatchObject({ status: 429, code: 'daily_send_cap', retryAfterS: 7200, limit: 'daily_send_cap' })
  })

  it('accepts the 10th new contact and refuses the 11th with new_contact_cap', () => {
    expect(checkSend(input({ counters: { ...fresh, newContacts: 9 } })).ok).toBe(true)
    const r = refusal(input({ counters: { ...fresh, newContacts: 10 } }))
    expect(r).toMatchObject({ status: 429, code: 'new_contact_cap', retryAfterS: 7200, limit: 'new_contact_cap' })
  })

  it('never counts a reply to someone who wrote first against the new-contact cap', () => {
    expect(checkSend(input({ counters: { ...fresh, newContacts: 10 }, contact: wroteFirst, newContactAllowance: 0 }))).toEqual({ ok: true, newContact: false })
  })

  it('names the warm-up day when the ramp is what refuses a new contact', () => {
    const r = refusal(input({ newContactAllowance: 0, rampDay: 2 }))
    expect(r.code).toBe('new_contact_cap')
    expect(r.message).toMatch(/warm-up day 2/)
  })

  it('accepts the 3rd send since the last inbound and refuses the 4th with loop_guard (no retry_after_s)', () => {
    expect(checkSend(input({ contact: { ...wroteFirst, sendsSinceInbound: LOOP_GUARD_SENDS - 1 } })).ok).toBe(true)
    const r = refusal(input({ contact: { ...wroteFirst, sendsSinceInbound: LOOP_GUARD_SENDS } }))
    expect(r).toMatchObject({ status: 429, code: 'loop_guard' })
    expect(r.retryAfterS).toBeUndefined()
    expect(r.limit).toBeUndefined()
  })

  it('accepts the 5th identical opener and refuses the 6th with opener_burst, which suspends', () => {
    expect(checkSend(input({ sameOpenerCount: OPENER_BURST_MAX - 1 })).ok).toBe(true)
    const r = refusal(input({ sameOpenerCount: OPENER_BURST_MAX }))
    expect(r).toMatchObject({ status: 429, code: 'opener_burst', suspend: true })
  })

  it('does not treat the same text to someone who wrote first as an opener', () => {
    expect(checkSend(input({ sameOpenerCount: 50, contact: wroteFirst })).ok).toBe(true)
  })

  it('checks suspension before the caps, and the daily cap before the per-person guards', () => {
    const everything = input({ suspended: true, counters: { ...fresh, sends: 50, newContacts: 10 }, sameOpenerCount: 9 })
    expect(refusal(everything).code).toBe('account_suspended')
    expect(refusal({ ...everything, suspended: false }).code).toBe('daily_send_cap')
    expect(refusal({ ...everything, suspended: false, counters: { ...fresh, newContacts: 10 } }).code).toBe('new_contact_cap')
  })
})

describe('countSend', () => {
  it('adds one send, and one new contact only for a new contact', () => {
    expect(countSend(fresh, true)).toMatchObject({ sends: 1, newContacts: 1 })
    expect(countSend(fresh, false)).toMatchObject({ sends: 1, newContacts: 0 })
  })
})

describe('limitsToFire', () => {
  it('fires a limit when the send reaches it, once', () => {
    expect(limitsToFire({ ...fresh, sends: 49 }, plan, 10)).toEqual([])
    expect(limitsToFire({ ...fresh, sends: 50 }, plan, 10)).toEqual(['daily_send_cap'])
    expect(limitsToFire({ ...fresh, sends: 50, fired: ['daily_send_cap'] }, plan, 10)).toEqual([])
    expect(limitsToFire({ ...fresh, newContacts: 10 }, plan, 10)).toEqual(['new_contact_cap'])
  })

  it('fires the limit that refused a send even when the allowance is 0 (warm-up)', () => {
    expect(limitsToFire(fresh, plan, 0)).toEqual([])
    expect(limitsToFire(fresh, plan, 0, 'new_contact_cap')).toEqual(['new_contact_cap'])
    expect(limitsToFire({ ...fresh, fired: ['new_contact_cap'] }, plan, 0, 'new_contact_cap')).toEqual([])
  })
})

describe('giveBackCounters', () => {
  const now: Counters = { day: '2026-05-10', sends: 7, newContacts: 3, fired: ['daily_send_cap', 'new_contact_cap'] }

  it('takes back one send, its new contact and only the limits it fired', () => {
    expect(giveBackCounters(now, { day: '2026-05-10', newContact: true, fired: ['new_contact_cap'] })).toEqual({
      day: '2026-05-10',
      sends: 6,
      newContacts: 2,
      fired: ['daily_send_cap'],
    })
    expect(giveBackCounters(now, { day: '2026-05-10', newContact: false, fired: [] })).toMatchObject({ sends: 6, newContacts: 3 })
  })

  it('changes nothing once a new UTC day started: that day never counted the send', () => {
    expect(giveBackCounters(now, { day: '2026-05-09', newContact: true, fired: ['daily_send_cap'] })).toBe(now)
  })
})

describe('giveBackGuard', () => {
  const counted = { hasInbound: false, sendsSinceInbound: 2, firstSentAt: NOW }

  it('drops the failed send from the person’s count and makes an opener-only person new again', () => {
    expect(giveBackGuard({ ...counted, sendsSinceInbound: 1 }, { newContact: true }, { laterSends: 0, wroteSince: false })).toEqual({
      guard: { hasInbound: false, sendsSinceInbound: 0, firstSentAt: null },
      keepsNewContact: false,
    })
  })

  it('leaves a later follow-up the new-contact slot it relied on', () => {
    expect(giveBackGuard(counted, { newContact: true }, { laterSends: 1, wroteSince: false })).toEqual({
      guard: { ...counted, sendsSinceInbound: 1 },
      keepsNewContact: true,
    })
  })

  it('keeps the count of sends after a reply that arrived meanwhile', () => {
    const replied = { hasInbound: true, sendsSinceInbound: 1, firstSentAt: NOW }
    expect(giveBackGuard(replied, { newContact: false }, { laterSends: 1, wroteSince: true }).guard).toEqual(replied)
  })
})

describe('openerKey', () => {
  it('treats case and spacing variations as the same opener', () => {
    expect(openerKey('Hi there,  want a deal?')).toBe(openerKey('  hi THERE, want\na deal? '))
    expect(openerKey('Hi there')).not.toBe(openerKey('Hi there!'))
  })
})
