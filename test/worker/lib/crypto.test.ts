import { describe, expect, it } from 'vitest'
import { hmacSha256Hex, randomBase62, sha256Hex, timingSafeEqual } from '../../../worker/lib/crypto'

describe('randomBase62', () => {
  it('draws exactly the asked number of base62 characters', () => {
    for (const n of [1, 32, 40, 100]) expect(randomBase62(n)).toMatch(new RegExp(`^[0-9A-Za-z]{${n}}$`))
  })

  it('does not repeat itself', () => {
    const seen = new Set(Array.from({ length: 200 }, () => randomBase62(20)))
    expect(seen.size).toBe(200)
  })

  it('uses the whole alphabet', () => {
    expect(new Set(randomBase62(5000)).size).toBe(62)
  })
})

describe('sha256Hex and hmacSha256Hex', () => {
  it('match the published test vectors (FIPS 180-2, RFC 4231 case 2)', async () => {
    expect(await sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    expect(await hmacSha256Hex('Jefe', 'what do ya want for nothing?')).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843')
  })
})

describe('timingSafeEqual', () => {
  it('is true only for identical strings', () => {
    expect(timingSafeEqual('token', 'token')).toBe(true)
    expect(timingSafeEqual('token', 'tokem')).toBe(false)
    expect(timingSafeEqual('token', 'token2')).toBe(false)
    expect(timingSafeEqual('', 'x')).toBe(false)
    expect(timingSafeEqual('', '')).toBe(true)
  })
})
