/** A call to the simulated network's control API (`/sim/...`) as the tests of the sim drive it: JSON in, JSON out. */
import type { SimServer } from '../../../relay/sim/network/server'

export async function simControl(sim: SimServer, method: string, path: string, body?: unknown) {
  const res = await fetch(`${sim.url}/sim${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}
