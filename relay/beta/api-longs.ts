/**
 * Whether GramJS's TL serialiser (tl/api.js) writes 64-bit integers with relay/beta/tl-longs.ts's writer. api.js takes
 * its own reference to `Helpers.toSignedLittleBuffer` when it loads, so that holds only in a process that imported
 * tl-longs before anything loaded `telegram`. relay/main.ts imports it first and checks this before the relay starts,
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
