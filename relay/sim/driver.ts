/**
 * The simulator as drivers: simulated phones behind the same relay, link, frames and Durable Objects as the real
 * drivers. alpha runs on the sim's own device client; beta runs the REAL beta driver (relay/beta: login steps, SRP,
 * flood pauses, probe) with its GramJS client replaced by one that talks to the simulated network.
 */
import { makeBetaDriver } from '../beta/client'
import type { Driver } from '../connector'
import { SimBetaClient } from './beta-client'
import { SimClient } from './client'
import { SIM_BETA_CREDS } from './network/beta-network'

export const simDriver: Driver = (opts) => new SimClient(opts)

export const simBetaDriver: Driver = makeBetaDriver({
  creds: SIM_BETA_CREDS,
  makeClient: (session, account) => new SimBetaClient(session, account.phone),
})
