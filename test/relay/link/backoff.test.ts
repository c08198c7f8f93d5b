import { describe, expect, it } from 'vitest'
import { MAX_RECONNECT_MS, MIN_RECONNECT_MS, reconnectDelayMs } from '../../../relay/link/backoff'

describe('reconnectDelayMs', () => {
  it('grows exponentially from MIN_RECONNECT_MS', () => {
    const top = () => 1
    expect([1, 2, 3, 4].map((n) => reconnectDelayMs(n, top))).toEqual([MIN_RECONNECT_MS, 2 * MIN_RECONNECT_MS, 4 * MIN_RECONNECT_MS, 8 * MIN_RECONNECT_MS])
  })

  it('never exceeds MAX_RECONNECT_MS however many attempts failed', () => {
    expect(reconnectDelayMs(50, () => 1)).toBe(MAX_RECONNECT_MS)
  })

  it('jitters between half and all of the ceiling', () => {
    expect(reconnectDelayMs(3, () => 0)).toBe(2 * MIN_RECONNECT_MS)
    const many = Array.from({ length: 200 }, () => reconnectDelayMs(3))
    expect(Math.min(...many)).toBeGreaterThanOrEqual(2 * MIN_RECONNECT_MS)
    expect(Math.max(...many)).toBeLessThanOrEqual(4 * MIN_RECONNECT_MS)
    expect(new Set(many).size).toBeGreaterThan(10)
  })
})
