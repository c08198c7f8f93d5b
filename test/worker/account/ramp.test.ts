import { describe, expect, it } from 'vitest'
import { activeDays, NEW_RAMP, rampAllowance, rampConnected, rampDay, rampDisconnected, type Ramp } from '../../../worker/account/ramp'
import { DAY_MS } from '../../../worker/lib/time'

const DAY1 = Date.parse('2026-06-01T10:00:00.000Z')
const day = (n: number, hour = 10) => DAY1 + (n - 1) * DAY_MS + (hour - 10) * 3_600_000
const PLAN_CAP = 10

describe('the alpha warm-up ramp', () => {
  it('is on day 1 before the number ever connected (shown while connecting)', () => {
    expect(rampDay(NEW_RAMP, DAY1)).toBe(1)
    expect(rampAllowance(NEW_RAMP, DAY1, PLAN_CAP)).toBe(0)
  })

  it('allows 0 new contacts on the first two active days, then one more per day up to the plan cap', () => {
    const r = rampConnected(NEW_RAMP, day(1))
    const allowances = Array.from({ length: 14 }, (_, i) => rampAllowance(r, day(i + 1), PLAN_CAP))
    expect(allowances).toEqual([0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10])
    expect(rampDay(r, day(12))).toBe(12)
  })

  it('changes day at UTC midnight, not 24 hours after connecting', () => {
    const r = rampConnected(NEW_RAMP, Date.parse('2026-06-01T23:59:00.000Z'))
    expect(rampDay(r, Date.parse('2026-06-01T23:59:59.999Z'))).toBe(1)
    expect(rampDay(r, Date.parse('2026-06-02T00:00:00.000Z'))).toBe(2)
    expect(rampDay(r, Date.parse('2026-06-03T00:00:00.000Z'))).toBe(3)
  })

  it('does not count days on which the number was never connected', () => {
    let r: Ramp = rampConnected(NEW_RAMP, day(1))
    r = rampDisconnected(r, day(2))
    expect(activeDays(r, day(5))).toBe(2)
    r = rampConnected(r, day(6))
    expect(rampDay(r, day(6))).toBe(3)
    expect(rampAllowance(r, day(6), PLAN_CAP)).toBe(1)
  })

  it('counts a day once however often the number reconnects on it', () => {
    let r: Ramp = rampConnected(NEW_RAMP, day(1, 8))
    r = rampDisconnected(r, day(1, 9))
    r = rampConnected(r, day(1, 11))
    r = rampDisconnected(r, day(1, 12))
    r = rampConnected(r, day(1, 13))
    expect(rampDay(r, day(1, 14))).toBe(1)
  })

  it('keeps counting from where it stopped when the number reconnects on the day it dropped', () => {
    let r: Ramp = rampConnected(NEW_RAMP, day(1))
    r = rampDisconnected(r, day(3))
    expect(activeDays(r, day(3))).toBe(3)
    r = rampConnected(r, day(3, 20))
    expect(rampDay(r, day(3, 21))).toBe(3)
    expect(rampDay(r, day(4))).toBe(4)
  })

  it('ignores repeated connect or disconnect reports', () => {
    const on = rampConnected(NEW_RAMP, day(1))
    expect(rampConnected(on, day(4))).toBe(on)
    const off = rampDisconnected(on, day(2))
    expect(rampDisconnected(off, day(5))).toBe(off)
  })

  it('never exceeds a smaller plan cap', () => {
    const r = rampConnected(NEW_RAMP, day(1))
    expect(rampAllowance(r, day(30), 3)).toBe(3)
  })
})
