import { describe, expect, it } from 'vitest'
import { DAY_MS, dayNumber, iso, isoOrNull, secondsToNextUtcDay, utcDay } from '../../../worker/lib/time'

const at = (s: string) => Date.parse(s)

describe('utcDay', () => {
  it('names the UTC day, not the local one', () => {
    expect(utcDay(at('2026-03-01T23:59:59.999Z'))).toBe('2026-03-01')
    expect(utcDay(at('2026-03-02T00:00:00.000Z'))).toBe('2026-03-02')
  })

  it('names each instant’s own day when the days asked alternate (it keeps the last one formatted)', () => {
    const instants = [
      '2026-03-01T23:59:59.999Z',
      '2026-03-02T00:00:00.000Z',
      '2026-03-01T00:00:00.000Z',
      '1969-12-31T23:59:59.999Z',
      '2026-03-02T12:00:00.000Z',
    ]
    for (const round of [1, 2]) for (const s of instants) expect(utcDay(at(s)), `${s}, round ${round}`).toBe(s.slice(0, 10))
  })
})

describe('dayNumber', () => {
  it('changes exactly at UTC midnight', () => {
    const midnight = at('2026-03-02T00:00:00.000Z')
    expect(dayNumber(midnight) - dayNumber(midnight - 1)).toBe(1)
    expect(dayNumber(midnight + DAY_MS - 1)).toBe(dayNumber(midnight))
  })
})

describe('secondsToNextUtcDay', () => {
  it('counts whole seconds to the next UTC midnight', () => {
    expect(secondsToNextUtcDay(at('2026-03-01T23:00:00.000Z'))).toBe(3600)
    expect(secondsToNextUtcDay(at('2026-03-01T12:34:56.000Z'))).toBe(11 * 3600 + 25 * 60 + 4)
  })

  it('is a full day at midnight itself', () => {
    expect(secondsToNextUtcDay(at('2026-03-02T00:00:00.000Z'))).toBe(86_400)
  })

  it('rounds a part second up and never answers 0', () => {
    expect(secondsToNextUtcDay(at('2026-03-01T23:59:59.999Z'))).toBe(1)
    expect(secondsToNextUtcDay(at('2026-03-01T23:59:58.500Z'))).toBe(2)
  })
})

describe('iso', () => {
  it('prints epoch milliseconds as ISO 8601 UTC and keeps null as null', () => {
    expect(iso(0)).toBe('1970-01-01T00:00:00.000Z')
    expect(isoOrNull(null)).toBeNull()
    expect(isoOrNull(undefined)).toBeNull()
    expect(isoOrNull(1000)).toBe('1970-01-01T00:00:01.000Z')
  })
})
