/** The delivery rules as plain functions: failure classes, Retry-After parsing, the retry schedule. */
import { describe, expect, it } from 'vitest'
import { failureTypeForStatus, nextAttemptAt, parseRetryAfter, RETRY_DELAYS_MS, type AttemptOutcome } from '../../../worker/webhooks/policy'

const NOW = 1_800_000_000_000
const fail = (extra: Partial<Extract<AttemptOutcome, { ok: false }>> = {}): Extract<AttemptOutcome, { ok: false }> => ({
  ok: false,
  statusCode: 500,
  failureType: 'temporary',
  message: 'answered HTTP 500',
  durationMs: 1,
  ...extra,
})

describe('failureTypeForStatus', () => {
  it('calls 5xx, 408 and 429 temporary, other 4xx permanent, and a 3xx or anything else unknown', () => {
    expect([500, 502, 503, 504, 408, 429].map(failureTypeForStatus)).toEqual(Array(6).fill('temporary'))
    expect([400, 401, 403, 404, 410, 422].map(failureTypeForStatus)).toEqual(Array(6).fill('permanent'))
    expect([102, 301, 302, 307, 308].map(failureTypeForStatus)).toEqual(Array(5).fill('unknown'))
  })
})

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates, and ignores garbage', () => {
    expect(parseRetryAfter('120', NOW)).toBe(120_000)
    expect(parseRetryAfter(new Date(NOW + 90_000).toUTCString(), NOW)).toBe(90_000)
    expect(parseRetryAfter(new Date(NOW - 90_000).toUTCString(), NOW)).toBe(0)
    expect(parseRetryAfter('soon', NOW)).toBeUndefined()
    expect(parseRetryAfter(null, NOW)).toBeUndefined()
  })
})

describe('nextAttemptAt', () => {
  it('follows 1 min, 5 min, 30 min, 2 h and then stops', () => {
    expect(RETRY_DELAYS_MS).toEqual([60_000, 300_000, 1_800_000, 7_200_000])
    expect([1, 2, 3, 4, 5].map((step) => nextAttemptAt(step, fail(), true, NOW))).toEqual([NOW + 60_000, NOW + 300_000, NOW + 1_800_000, NOW + 7_200_000, null])
  })

  it('does not retry when retries are off, on 410 or when the URL itself is refused', () => {
    expect(nextAttemptAt(1, fail(), false, NOW)).toBeNull()
    expect(nextAttemptAt(1, fail({ gone: true, statusCode: 410 }), true, NOW)).toBeNull()
    expect(nextAttemptAt(1, fail({ final: true, statusCode: null }), true, NOW)).toBeNull()
  })

  it('retries permanent failures too (a receiver mid-deploy answers 404 for a while)', () => {
    expect(nextAttemptAt(1, fail({ statusCode: 404, failureType: 'permanent' }), true, NOW)).toBe(NOW + 60_000)
  })

  it('honours Retry-After between the scheduled delay and the next step; the last step caps at itself', () => {
    expect(nextAttemptAt(1, fail({ retryAfterMs: 200_000 }), true, NOW)).toBe(NOW + 200_000)
    expect(nextAttemptAt(1, fail({ retryAfterMs: 10_000_000 }), true, NOW)).toBe(NOW + 300_000)
    expect(nextAttemptAt(2, fail({ retryAfterMs: 10_000 }), true, NOW)).toBe(NOW + 300_000)
    expect(nextAttemptAt(4, fail({ retryAfterMs: 86_400_000 }), true, NOW)).toBe(NOW + 7_200_000)
  })
})
