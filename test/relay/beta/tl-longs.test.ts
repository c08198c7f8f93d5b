/**
 * relay/beta/tl-longs.ts: Node's decoding of GramJS's 64-bit integers gives the library's own answers, to the type,
 * for every 8 bytes and both signs; every other call is the library's; once installed, GramJS's reader uses it.
 */
import bigInt from 'big-integer'
import fc from 'fast-check'
import { Api, helpers } from 'telegram'
import { BinaryReader } from 'telegram/extensions'
import { describe, expect, it } from 'vitest'
import { installFastLongs, libraryReadBigInt, readBigIntFromBuffer } from '../../../relay/beta/tl-longs'

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

describe('installFastLongs', () => {
  it("puts Node's decoding where GramJS's reader calls it, once", () => {
    installFastLongs()
    installFastLongs()
    expect(helpers.readBigIntFromBuffer).toBe(readBigIntFromBuffer)
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
