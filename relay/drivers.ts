/**
 * The drivers a relay can run, by name (RELAY_DRIVER), each as the channels it serves. `sim` plays alpha and beta
 * with the simulated network; the Baileys driver registers as `alpha` and GramJS as `beta`.
 */
import { alphaDriver } from './alpha/client'
import { makeBetaDriver } from './beta/client'
import type { RelayConfig } from './config'
import type { Driver } from './connector'
import { simBetaDriver, simDriver } from './sim/driver'

export type RelayChannel = 'alpha_web' | 'beta'
export type DriverSet = Partial<Record<RelayChannel, Driver>>

export const DRIVERS: Record<string, (config: RelayConfig) => DriverSet> = {
  alpha: () => ({ alpha_web: alphaDriver }),
  beta: (config) => {
    if (!config.beta) throw new Error('RELAY_DRIVER=beta needs the app credentials RELAY_BETA_API_ID and RELAY_BETA_API_HASH')
    return { beta: makeBetaDriver({ creds: config.beta }) }
  },
  sim: () => ({ alpha_web: simDriver, beta: simBetaDriver }),
}

/** The channels a driver serves: the simulator plays every channel, a real driver the one it is named for. */
export function channelsOf(driverName: string): RelayChannel[] {
  if (driverName === 'sim') return ['alpha_web', 'beta']
  if (driverName === 'beta') return ['beta']
  return ['alpha_web']
}
