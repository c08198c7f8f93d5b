/**
 * The drivers a relay can run, by name (RELAY_DRIVER). `sim` plays alpha (and later beta) with simulated phones;
 * the Baileys driver registers as `alpha` and GramJS as `beta`. RELAY_DRIVER=sim runs every channel on the sim.
 */
import { alphaDriver } from './alpha/client'
import { makeBetaDriver } from './beta/client'
import type { RelayConfig } from './config'
import type { Driver } from './connector'
import { simDriver } from './sim/driver'

export const DRIVERS: Record<string, (config: RelayConfig) => Driver> = {
  alpha: () => alphaDriver,
  beta: (config) => {
    if (!config.beta) throw new Error('RELAY_DRIVER=beta needs the app credentials RELAY_BETA_API_ID and RELAY_BETA_API_HASH')
    return makeBetaDriver({ creds: config.beta })
  },
  sim: () => simDriver,
}

/** The channels a driver serves: the simulator plays every channel, a real driver the one it is named for. */
export function channelsOf(driverName: string): Array<'alpha_web' | 'beta'> {
  if (driverName === 'sim') return ['alpha_web']
  if (driverName === 'beta') return ['beta']
  return ['alpha_web']
}
