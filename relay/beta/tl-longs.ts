/**
 * GramJS's 64-bit integers, decoded and encoded by Node instead of by big-integer arithmetic. Installed when this
 * module is imported, which relay/main.ts does first of all; every other module that reaches GramJS's network code
 * (socket.ts, the simulated data centre) comes after it.
 *
 * Why: GramJS reads every `long` on the wire (user ids, access hashes, random ids, and the message id and salt of
 * every MTProto envelope) through `helpers.readBigIntFromBuffer`. That copies the 8 bytes, reverses them, renders
 * them in hex, parses the hex into a big-integer digit by digit, and renders the result in base 2 to test the sign.
 * In a CPU profile of a beta inbound burst (`RELAY_BENCH_PHASES=beta-throughput RELAY_BENCH_PROFILE=1 npm run bench --
 * relay`) that function was a third of the relay's busy time, and much of its garbage. It writes them through
 * `helpers.toSignedLittleBuffer`: eight big-integer shifts and masks per long, each a division in big-integer. The
 * latest release (2.26.22, pinned in package.json) still does both this way.
 *
 * What: the 8-byte little-endian case, the only one on the message path, becomes Node's readBigInt64LE (or
 * readBigUInt64LE) wrapped in the same big-integer type, and writeBigUInt64LE of the value's low 64 bits; every other
 * call (128- and 256-bit nonces, big-endian keys of the login handshake, arrays, strings) still goes to the library's
 * own function. test/relay/beta/tl-longs.test.ts holds each pair to the same answers over generated values, so an
 * upgrade that changes the library's meaning shows there. The simulated data centre (relay/sim) writes and reads its
 * envelopes with these too: the same bytes, at a cost that no longer crowds the relay it shares the machine with.
 *
 * How: BinaryReader and MTProtoState call both through the Helpers module's exports object at each call, so replacing
 * those properties is enough for them. tl/api.js, which writes the long fields of every TL object (the msg_ids of the
 * relay's acks, the ids of the data centre's updates), takes its own reference to the writer when it loads; so this
 * module imports Helpers alone, installs at import, and the entry points import it before anything loads `telegram`.
 * relay/main.ts and the benchmarks check that with requireFastLongsInApi (api-longs.ts) and stop if it fails. Should a
 * release move either function, the install throws rather than silently coding the slow way.
 */
import bigInt from 'big-integer'
// The Helpers module alone (its CommonJS exports object), not the package: importing `telegram` would load tl/api.js.
import helpers from 'telegram/Helpers'

type ReadBigInt = typeof helpers.readBigIntFromBuffer

/** The library's own function, as it was before the install (what the fast path must agree with). */
export const libraryReadBigInt: ReadBigInt = helpers.readBigIntFromBuffer

/** The same answer as the library's, computed by Node for the 8-byte little-endian case. */
export const readBigIntFromBuffer: ReadBigInt = (buffer, little = true, signed = false) => {
  if (little && Buffer.isBuffer(buffer) && buffer.length === 8) return bigInt(signed ? buffer.readBigInt64LE(0) : buffer.readBigUInt64LE(0))
  return libraryReadBigInt(buffer, little, signed)
}

type WriteBigInt = typeof helpers.toSignedLittleBuffer

/** The library's own writer, as it was before the install. */
export const libraryToSignedLittleBuffer: WriteBigInt = helpers.toSignedLittleBuffer

/**
 * The value as a native bigint when it is one the fast writer takes: a big-integer holding a native BigInt (what
 * big-integer makes on every runtime with BigInt), or a safe integer; otherwise undefined (the library decides).
 */
function nativeValue(big: Parameters<WriteBigInt>[0]): bigint | undefined {
  if (typeof big === 'number') return Number.isSafeInteger(big) ? BigInt(big) : undefined
  if (typeof big !== 'object' || big === null) return undefined
  const value: unknown = Reflect.get(big, 'value')
  return typeof value === 'bigint' ? value : undefined
}

/** Longs written by the fast writer so far: how fastLongsInApi (api-longs.ts) sees whether tl/api.js calls it. */
let fastWrites = 0
export const fastWritesSoFar = () => fastWrites

/** The same bytes as the library's for 8-byte longs: the low 64 bits of the value, two's complement, little-endian. */
export const toSignedLittleBuffer: WriteBigInt = (big, number = 8) => {
  const value = number === 8 ? nativeValue(big) : undefined
  if (value === undefined) return libraryToSignedLittleBuffer(big, number)
  fastWrites++
  const out = Buffer.allocUnsafe(8)
  out.writeBigUInt64LE(BigInt.asUintN(64, value))
  return out
}

/** Replaces the library's decoder and writer in the Helpers exports object GramJS calls through; idempotent. */
export function installFastLongs(): void {
  if (helpers.readBigIntFromBuffer === readBigIntFromBuffer && helpers.toSignedLittleBuffer === toSignedLittleBuffer) return
  if (helpers.readBigIntFromBuffer !== libraryReadBigInt || helpers.toSignedLittleBuffer !== libraryToSignedLittleBuffer) {
    throw new Error('telegram/Helpers has moved readBigIntFromBuffer or toSignedLittleBuffer: review relay/beta/tl-longs.ts for this release')
  }
  // `helpers` is the CommonJS exports object itself (TypeScript sees it read-only): GramJS reads it at each call.
  Reflect.set(helpers, 'readBigIntFromBuffer', readBigIntFromBuffer)
  Reflect.set(helpers, 'toSignedLittleBuffer', toSignedLittleBuffer)
  if (helpers.readBigIntFromBuffer !== readBigIntFromBuffer || helpers.toSignedLittleBuffer !== toSignedLittleBuffer) {
    throw new Error('telegram/Helpers could not be given the fast longs')
  }
}

// At import, so that a process whose entry imports this module first (relay/main.ts, the benchmarks) has it in place
// before tl/api.js loads and takes its own reference to the writer.
installFastLongs()
