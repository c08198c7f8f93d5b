/**
 * The baseline GET's server CPU of two servers measured in alternating rounds, both running: how `--compare` checks
 * the "GET CPU ≤ 1.1x" goal. Measured one after the other, the same commit's figure moved by a third between runs on
 * this (virtual, shared) machine; rounds that alternate see the same machine state.
 *
 * The goal is judged on the median of each pair's ratio (a round of each side, back to back), not on the ratio of
 * each side's median: the machine's speed drifts by a third within a minute here, and a ratio taken within one pair
 * cancels the drift, where two medians over the whole run carry it. And a server process keeps a bias of its own
 * for its life (what its JIT made of the code, where its heap landed): two fresh servers of one tree read 0.97x to
 * 1.10x in one set of rounds, so the rounds are spread over several sets, each on a fresh pair of servers started
 * alike. A server that has just served the inbound bench is not started alike: one read 1.10x against a fresh one
 * for the same GET path.
 */
import type { LocalServer } from '../e2e/local-server'
import { api, percentile } from './bench-kit'

/** `ratio`: the median over all pairs of rounds of mine ÷ theirs; `mineMs` and `theirsMs`: each side's median round. */
export type InterleavedCpu = { sets: number; rounds: number; callsPerRound: number; mineMs: number; theirsMs: number; ratio: number }

const SETS = 3
const ROUNDS_PER_SET = 8
const CALLS = 150
const WARM = 300

async function cpuPerCall(server: LocalServer, key: string, calls: number): Promise<number> {
  const before = server.cpuSeconds()
  for (let i = 0; i < calls; i++) {
    const r = await api(server, key, 'GET', '/usage')
    if (r.status !== 200) throw new Error(`GET /usage answered ${r.status}`)
  }
  return ((server.cpuSeconds() - before) * 1000) / calls
}

/** Alternating rounds on a pair of running servers: each side's CPU per call, round by round. */
async function oneSet(mine: LocalServer, theirs: LocalServer, rounds: number): Promise<{ mine: number[]; theirs: number[] }> {
  const sides = await Promise.all([mine, theirs].map(async (server) => ({ server, key: (await server.newTenant()).key, ms: [] as number[] })))
  for (const s of sides) await cpuPerCall(s.server, s.key, WARM)
  for (let round = 0; round < rounds; round++) {
    // Each side goes first in half the rounds.
    const order = round % 2 === 0 ? sides : [...sides].reverse()
    for (const s of order) s.ms.push(await cpuPerCall(s.server, s.key, CALLS))
  }
  const [m, t] = sides
  return { mine: m!.ms, theirs: t!.ms }
}

/** Starts a fresh server of each tree per set (the first started alternates), measures, and stops them. */
export async function interleavedCpu(startMine: () => Promise<LocalServer>, startTheirs: () => Promise<LocalServer>): Promise<InterleavedCpu> {
  const mine: number[] = []
  const theirs: number[] = []
  const ratios: number[] = []
  for (let set = 0; set < SETS; set++) {
    const up: { mine?: LocalServer; theirs?: LocalServer } = {}
    try {
      // Inside the try: a server started before the other failed to start is still stopped.
      for (const side of set % 2 === 0 ? (['mine', 'theirs'] as const) : (['theirs', 'mine'] as const)) {
        up[side] = await (side === 'mine' ? startMine() : startTheirs())
      }
      if (!up.mine || !up.theirs) throw new Error('interleavedCpu: a server did not start')
      const got = await oneSet(up.mine, up.theirs, ROUNDS_PER_SET)
      mine.push(...got.mine)
      theirs.push(...got.theirs)
      ratios.push(...got.mine.map((m, i) => m / got.theirs[i]!))
    } finally {
      await Promise.all([up.mine?.stop(), up.theirs?.stop()])
    }
  }
  return {
    sets: SETS,
    rounds: SETS * ROUNDS_PER_SET,
    callsPerRound: CALLS,
    mineMs: percentile(mine, 50),
    theirsMs: percentile(theirs, 50),
    ratio: percentile(ratios, 50),
  }
}
