/**
 * The control API's data-centre routes (docs/simulator.md), under /sim/beta/dc:
 *   GET  /sim/beta/dc                 address, faults in force, what it counted, how GetDifference slices
 *   POST /sim/beta/dc/sessions        {phone?}   a new auth key as a StringSession (a new login starts from it)
 *   POST /sim/beta/dc/drop            ends every connection (clients reconnect by themselves)
 *   POST /sim/beta/dc/refuse          {seconds}  drops every connection and refuses new ones for that long
 *   POST /sim/beta/dc/silence         {seconds}  connections stay open but nothing is answered or pushed
 *   POST /sim/beta/dc/restore         ends a refusal or silence now
 *   POST /sim/beta/dc/config          {difference_slice?, update_log_max?}
 */
import { z } from 'zod'
import { E164 } from '../bodies'
import { SimError } from '../network'
import type { BetaDataCentre } from './server'

const Seconds = z.object({ seconds: z.number().positive().max(86_400) })
const MintBody = z.object({ phone: E164.nullable().default(null) })
const ConfigBody = z.object({
  difference_slice: z.number().int().min(1).max(10_000).optional(),
  update_log_max: z.number().int().min(1).max(1_000_000).optional(),
})

export function dcView(dc: BetaDataCentre) {
  return {
    ...dc.address,
    ...dc.faults(),
    stats: dc.stats,
    difference_slice: dc.net.updates.sliceSize,
    update_log_max: dc.net.updates.logMax,
  }
}

export async function dcRoute(
  dc: BetaDataCentre,
  route: string,
  body: () => Promise<unknown>,
  parse: <S extends z.ZodType>(shape: S, value: unknown) => z.infer<S>
): Promise<unknown> {
  switch (route) {
    case 'GET ':
      return dcView(dc)
    case 'POST sessions':
      return { session: await dc.mintSession(parse(MintBody, await body()).phone) }
    case 'POST drop':
      return { dropped: dc.drop() }
    case 'POST refuse':
      dc.refuse(parse(Seconds, await body()).seconds * 1000)
      return dcView(dc)
    case 'POST silence':
      dc.silence(parse(Seconds, await body()).seconds * 1000)
      return dcView(dc)
    case 'POST restore':
      dc.restore()
      return dcView(dc)
    case 'POST config': {
      const b = parse(ConfigBody, await body())
      if (b.difference_slice) dc.net.updates.sliceSize = b.difference_slice
      if (b.update_log_max) dc.net.updates.logMax = b.update_log_max
      return dcView(dc)
    }
    default:
      throw new SimError(404, `unknown sim route ${route} for the beta data centre; see docs/simulator.md`)
  }
}
