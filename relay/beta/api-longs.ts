/**
 * Whether GramJS's TL serialiser (tl/api.js) writes 64-bit integers with relay/beta/tl-longs.ts's writer. api.js takes
 * its own reference to `Helpers.toSignedLittleBuffer` when it loads, so that holds only in a process that imported
 * tl-longs before anything loaded `telegram`. relay/main.ts imports it first and requires this before the relay starts,
 * so an import that moves ahead of it stops the relay (and every e2e test that starts one) instead of quietly costing
 * the library's big-integer arithmetic on each long the relay writes (an ack per inbound message).
 */
import bigInt from 'big-integer'
import { Api } from 'telegram'
import { fastWritesSoFar } from './tl-longs'

export function fastLongsInApi(): boolean {
  const before = fastWritesSoFar()
  new Api.MsgsAck({ msgIds: [bigInt(1)] }).getBytes()
  return fastWritesSoFar() > before
}

/** Throws, naming the entry point `entry` whose first import must be tl-longs, unless fastLongsInApi holds. */
export function requireFastLongsInApi(entry: string): void {
  if (!fastLongsInApi()) throw new Error(`telegram was loaded before relay/beta/tl-longs.ts; keep it the first import of ${entry}`)
}
