import { describe, expect, it } from 'vitest'
import { decodeCursor, encodeCursor } from '../../../worker/lib/cursor'

describe('encodeCursor / decodeCursor', () => {
  it('round-trips a sequence number for each kind', () => {
    for (const seq of [0, 1, 42, 999_999_999_999_999]) {
      expect(decodeCursor('list', encodeCursor('list', seq))).toEqual({ seq, placement: 0 })
      expect(decodeCursor('wait', encodeCursor('wait', seq))).toEqual({ seq, placement: 0 })
      // A cursor issued after a move carries the tenant's placement (db/cursor-maps.ts translates older ones).
      expect(decodeCursor('wait', encodeCursor('wait', seq, 3))).toEqual({ seq, placement: 3 })
    }
  })

  it('is opaque: the number does not show and the text is URL-safe', () => {
    const c = encodeCursor('list', 123456)
    expect(c).not.toContain('123456')
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/)
  })

  it('refuses a cursor of the other kind', () => {
    expect(decodeCursor('wait', encodeCursor('list', 5))).toBeNull()
    expect(decodeCursor('list', encodeCursor('wait', 5))).toBeNull()
  })

  it('refuses text that is not a cursor', () => {
    for (const raw of ['', 'abc', '!!!', '5', btoa('l1:-1'), btoa('l1:1e3'), btoa('l1:12345678901234567'), btoa('x1:5'), btoa('l1:5 ')]) {
      expect(decodeCursor('list', raw)).toBeNull()
    }
  })
})
