/**
 * The simulator as drivers: simulated phones behind the same relay, link, frames and Durable Objects as the real
 * drivers. alpha runs on the sim's own device client; beta runs the REAL beta driver (relay/beta) with the REAL GramJS
 * client, connected over TCP to the simulator's fake data centre (network/beta-dc/), which mints the auth key a new
 * login starts from (beta-dc-link.ts).
 */
import { makeBetaDriver } from '../beta/client'
import { makeGramClient } from '../beta/socket'
import type { Driver } from '../connector'
import { simGramOptions } from './beta-dc-link'
import { scaledBetaTiming, simTimeScale } from './beta-timing'
import { SimClient } from './client'
import { SIM_BETA_CREDS } from './network/beta-network'

export const simDriver: Driver = (opts) => new SimClient(opts)

const timing = scaledBetaTiming(simTimeScale())

export const simBetaDriver: Driver = makeBetaDriver({
  creds: SIM_BETA_CREDS,
  makeClient: makeGramClient(SIM_BETA_CREDS, { ...simGramOptions(), timing: timing.client }),
  timing: timing.driver,
})
