/** Where the sim driver finds the simulated network: set by the relay at start (RELAY_SIM_URL or its own in-process one). */
let networkUrl: string | null = process.env.RELAY_SIM_URL ?? null

export function configureSim(opts: { url: string }): void {
  networkUrl = opts.url
}

/** The simulated network's base URL (its control API is under /sim). */
export function simBaseUrl(): string {
  if (!networkUrl) throw new Error('the sim driver has no network: set RELAY_SIM_URL or let the relay start one (--sim)')
  return networkUrl.replace(/\/+$/, '')
}

/** The device endpoint of the simulated network. */
export function simDeviceUrl(): string {
  if (!networkUrl) throw new Error('the sim driver has no network: set RELAY_SIM_URL or let the relay start one (--sim)')
  const u = new URL(networkUrl)
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:'
  u.pathname = '/sim/ws'
  return u.toString()
}
