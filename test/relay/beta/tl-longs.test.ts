/**
 * relay/beta/tl-longs.ts: Node's decoding of GramJS's 64-bit integers gives the library's own answers, to the type,
 * for every 8 bytes and both signs, and its encoding the library's bytes for every value; every other call is the
 * library's; once installed, GramJS's reader and writer use them.
 */
import bigInt from 'big-integer'
import fc from 'fast-check'
import { Api, helpers } from 'telegram'
import { BinaryReader } from 'telegram/extensions'
import { describe, expect, it } from 'vitest'
import { installFastLongs, libraryReadBigInt, libraryToSignedLittleBuffer, readBigIntFromBuffer, toSignedLittleBuffer } from '../../../relay/beta/tl-longs'

/** Same value, same big-integer class (NativeBigInt where the runtime has BigInt), same rendering. */
function expectSame(fast: bigInt.BigInteger, library: bigInt.BigInteger): void {
  expect(fast.constructor).toBe(library.constructor)
  expect(fast.toString()).toBe(library.toString())
  expect(fast.equals(library)).toBe(true)
}

/** Fixed, so a run is repeatable (a failure prints its counterexample); the decoder is cheap enough for many runs. */
const RUNS = { seed: 23, numRuns: 2_000 }

const eightBytes = fc.uint8Array({ minLength: 8, maxLength: 8 }).map((bytes) => Buffer.from(bytes))

describe('readBigIntFromBuffer', () => {
  it('agrees with the library on every 8-byte little-endian long, signed and unsigned', () => {
    fc.assert(
      fc.property(eightBytes, fc.boolean(), (buffer, signed) => {
        const before = Buffer.from(buffer)
        expectSame(readBigIntFromBuffer(buffer, true, signed), libraryReadBigInt(buffer, true, signed))
        expect(buffer).toEqual(before)
      }),
      RUNS
    )
  })

  it('agrees at the sign boundary and the extremes', () => {
    const edges = ['0000000000000000', '0100000000000000', 'ffffffffffffff7f', '0000000000000080', '0100000000000080', 'ffffffffffffffff']
    for (const hex of edges) {
      for (const signed of [true, false])
        expectSame(readBigIntFromBuffer(Buffer.from(hex, 'hex'), true, signed), libraryReadBigInt(Buffer.from(hex, 'hex'), true, signed))
    }
    expect(readBigIntFromBuffer(Buffer.from('0000000000000080', 'hex'), true, true).toString()).toBe('-9223372036854775808')
    expect(readBigIntFromBuffer(Buffer.from('ffffffffffffffff', 'hex'), true, false).toString()).toBe('18446744073709551615')
  })

  it('leaves every other call to the library: other lengths, big-endian, the default unsigned', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.boolean(), fc.boolean(), (bytes, little, signed) => {
        const buffer = Buffer.from(bytes)
        expectSame(readBigIntFromBuffer(buffer, little, signed), libraryReadBigInt(buffer, little, signed))
      }),
      RUNS
    )
    const buffer = Buffer.from('0000000000000080', 'hex')
    expectSame(readBigIntFromBuffer(buffer), libraryReadBigInt(buffer))
  })
})

describe('toSignedLittleBuffer', () => {
  const TWO_64 = 1n << 64n

  it('writes the library’s bytes for every big-integer, past 64 bits and below −2⁶³ too', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -2n * TWO_64, max: 2n * TWO_64 }), (value) => {
        const big = bigInt(value)
        expect(toSignedLittleBuffer(big, 8)).toEqual(libraryToSignedLittleBuffer(big, 8))
        expect(toSignedLittleBuffer(big)).toEqual(libraryToSignedLittleBuffer(big))
      }),
      RUNS
    )
  })

  it('writes the library’s bytes for safe integers, and at the sign boundary and the extremes', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => {
        expect(toSignedLittleBuffer(n, 8)).toEqual(libraryToSignedLittleBuffer(n, 8))
      }),
      RUNS
    )
    const edges = [0n, 1n, -1n, (1n << 63n) - 1n, -(1n << 63n), (1n << 63n) + 1n, TWO_64 - 1n, TWO_64, -TWO_64]
    for (const value of edges) expect(toSignedLittleBuffer(bigInt(value), 8)).toEqual(libraryToSignedLittleBuffer(bigInt(value), 8))
    expect(toSignedLittleBuffer(bigInt(-(1n << 63n)), 8).toString('hex')).toBe('0000000000000080')
    expect(toSignedLittleBuffer(bigInt(-1), 8).toString('hex')).toBe('ffffffffffffffff')
  })

  it('leaves every other call to the library: other lengths, strings, unsafe numbers', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(1n << 255n), max: (1n << 255n) - 1n }), fc.constantFrom(4, 16, 32), (value, length) => {
        expect(toSignedLittleBuffer(bigInt(value), length)).toEqual(libraryToSignedLittleBuffer(bigInt(value), length))
      }),
      RUNS
    )
    for (const input of ['123456789012345678', '-5', 2 ** 60, -(2 ** 60)]) {
      expect(toSignedLittleBuffer(input, 8)).toEqual(libraryToSignedLittleBuffer(input, 8))
    }
  })

  it('reads back, through the fast reader, what it wrote', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }), (value) => {
        expect(readBigIntFromBuffer(toSignedLittleBuffer(bigInt(value), 8), true, true).toString()).toBe(value.toString())
      }),
      RUNS
    )
  })
})

describe('installFastLongs', () => {
  it("puts Node's decoding and encoding where GramJS's reader and envelope writer call them, once", () => {
    installFastLongs()
    installFastLongs()
    expect(helpers.readBigIntFromBuffer).toBe(readBigIntFromBuffer)
    expect(helpers.toSignedLittleBuffer).toBe(toSignedLittleBuffer)
    const negative = new BinaryReader(Buffer.from('0000000000000080', 'hex'))
    expect(negative.readLong().toString()).toBe('-9223372036854775808')
    const unsigned = new BinaryReader(Buffer.from('0000000000000080', 'hex'))
    expect(unsigned.readLong(false).toString()).toBe('9223372036854775808')
  })

  it('decodes what the library wrote: a user with its id and access hash, read back whole', () => {
    installFastLongs()
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: (1n << 40n) - 1n }), fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }), (id, hash) => {
        const user = new Api.User({ id: bigInt(id), accessHash: bigInt(hash), firstName: 'Ada' })
        const back = new BinaryReader(Buffer.from(user.getBytes())).tgReadObject()
        expect(back).toBeInstanceOf(Api.User)
        if (!(back instanceof Api.User)) return
        expect(back.id.toString()).toBe(id.toString())
        expect(back.accessHash?.toString()).toBe(hash.toString())
        expect(back.firstName).toBe('Ada')
      }),
      { ...RUNS, numRuns: 200 }
    )
  })
})
