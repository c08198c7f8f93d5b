/**
 * How the simulator's beta client finds the fake data centre: its address and new auth keys come from the control API
 * (GET /sim/beta/dc, POST /sim/beta/dc/sessions) of the simulated network the relay was pointed at, and the socket
 * GramJS dials is routed there (beta-route.ts). Only the first two steps are the simulator's; the client is GramJS's.
 */
import { z } from 'zod'
import type { GramOptions } from '../beta/socket'
import { routedSocket, type DcAddress } from './beta-route'
import { simBaseUrl } from './config'

const DcView = z.object({ host: z.string(), port: z.number().int().min(1).max(65535) })
const Minted = z.object({ session: z.string().min(1) })

async function control(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${simBaseUrl()}/sim/beta/dc${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (!res.ok) throw new Error(`sim beta: ${method} /sim/beta/dc${path} answered ${res.status}`)
  return res.json()
}

/** The data centre's address, asked once per connection attempt (a restarted simulator may listen elsewhere). */
async function dcAddress(): Promise<DcAddress> {
  return DcView.parse(await control('GET', ''))
}

export function simGramOptions(): GramOptions {
  return {
    initialSession: async (account) => Minted.parse(await control('POST', '/sessions', { phone: account.phone })).session,
    networkSocket: routedSocket(dcAddress),
  }
}
