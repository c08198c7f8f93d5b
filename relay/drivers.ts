/**
 * The drivers a relay can run, by name, each as the channels it serves. `sim` plays alpha and beta with the simulated
 * network; the Baileys driver registers as `alpha` and GramJS as `beta`. RELAY_DRIVER names one or several
 * (`alpha,beta`): one relay process then keeps both networks' sessions.
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

/** The driver names in RELAY_DRIVER (`alpha`, `beta`, `alpha,beta`, `sim`), checked against what this build has. */
export function driverNames(setting: string): string[] {
  const names = [
    ...new Set(
      setting
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean)
    ),
  ]
  const unknown = names.filter((n) => !(n in DRIVERS))
  if (names.length === 0 || unknown.length > 0)
    throw new Error(`RELAY_DRIVER=${setting} is not available; this build has: ${Object.keys(DRIVERS).join(', ')} (several may be joined with commas)`)
  // The simulator already plays every channel; mixing it with a real driver would put simulated and real sessions
  // behind one relay token.
  if (names.includes('sim') && names.length > 1) throw new Error('RELAY_DRIVER=sim runs alone: it already plays every channel')
  return names
}

/** Every driver RELAY_DRIVER names, merged: each channel served by the one driver that claims it. */
export function driversFor(config: RelayConfig): DriverSet {
  const set: DriverSet = {}
  for (const name of driverNames(config.driver)) Object.assign(set, DRIVERS[name]!(config))
  return set
}

/** The channels a RELAY_DRIVER setting serves: the simulator plays every channel, a real driver the one it is named for. */
export function channelsOf(setting: string): RelayChannel[] {
  const served = new Set(driverNames(setting).flatMap((n) => (n === 'sim' ? ['alpha_web', 'beta'] : n === 'beta' ? ['beta'] : ['alpha_web'])))
  return (['alpha_web', 'beta'] as const).filter((c) => served.has(c))
}
