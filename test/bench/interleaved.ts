/**
 * The baseline GET's server CPU of two servers measured in alternating rounds, both running: how `--compare` checks
 * the "GET CPU ≤ 1.1x" goal. Measured one after the other, the same commit's figure moved by a third between runs on
 * this (virtual, shared) machine; rounds that alternate see the same machine state, and the median of each side's
 * rounds drops a round a neighbour disturbed.
 */
import type { LocalServer } from '../e2e/local-server'
import { api, percentile } from './bench-kit'

export type InterleavedCpu = { rounds: number; callsPerRound: number; mineMs: number; theirsMs: number }

const ROUNDS = 6
const CALLS = 300
const WARM = 300

async function cpuPerCall(server: LocalServer, key: string, calls: number): Promise<number> {
  const before = server.cpuSeconds()
  for (let i = 0; i < calls; i++) {
    const r = await api(server, key, 'GET', '/usage')
    if (r.status !== 200) throw new Error(`GET /usage answered ${r.status}`)
  }
  return ((server.cpuSeconds() - before) * 1000) / calls
}

export async function interleavedCpu(mine: LocalServer, theirs: LocalServer): Promise<InterleavedCpu> {
  const sides = await Promise.all([mine, theirs].map(async (server) => ({ server, key: (await server.newTenant()).key, ms: [] as number[] })))
  for (const s of sides) await cpuPerCall(s.server, s.key, WARM)
  for (let round = 0; round < ROUNDS; round++) {
    // Each side goes first in half the rounds.
    const order = round % 2 === 0 ? sides : [...sides].reverse()
    for (const s of order) s.ms.push(await cpuPerCall(s.server, s.key, CALLS))
  }
  return { rounds: ROUNDS, callsPerRound: CALLS, mineMs: percentile(sides[0]!.ms, 50), theirsMs: percentile(sides[1]!.ms, 50) }
}
