/**
 * How much to fuzz: a fixed seed and a few runs per operation in `npm test`; `npm run fuzz` passes a larger run and
 * a fresh seed (FUZZ_RUNS, FUZZ_SEED, FUZZ_PATH through test/worker/vitest.config.ts). A failure names the seed and
 * the path that replay it.
 */
import fc from 'fast-check'
import { inject } from 'vitest'

export type FuzzSettings = { seed: number; runs: number; path: string; report: boolean }

declare module 'vitest' {
  export interface ProvidedContext {
    fuzz: FuzzSettings
  }
}

export const FUZZ = inject('fuzz')

/**
 * Runs a property with the settings; a failure's message says how to replay exactly that case. `share` scales the
 * runs for suites that mostly re-reach what another covers (MCP tools run REST operations), to keep `npm test` short.
 */
export async function fuzz<T>(name: string, arbitrary: fc.Arbitrary<T>, check: (value: T) => Promise<void>, share = 1): Promise<void> {
  const details = await fc.check(fc.asyncProperty(arbitrary, check), {
    seed: FUZZ.seed,
    numRuns: Math.max(3, Math.round(FUZZ.runs * share)),
    ...(FUZZ.path ? { path: FUZZ.path } : {}),
  })
  if (!details.failed) return
  const replay = `replay: FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath ?? ''} npm run fuzz -- -t '${name}'`
  const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
  throw new Error(`${cause}\n${fc.defaultReportMessage(details)}\n${replay}`)
}

const tallies = new Map<string, Map<number, number>>()

/** Counts an answer's status (or JSON-RPC error code) per operation, for the report `npm run fuzz` prints (FUZZ_REPORT=1). */
export function tally(name: string, status: number): void {
  const counts = tallies.get(name) ?? new Map<number, number>()
  counts.set(status, (counts.get(status) ?? 0) + 1)
  tallies.set(name, counts)
}

/** One line per operation: how often each status came back, so a run shows whether it reached the deep paths. */
export function printTallies(title: string): void {
  if (!FUZZ.report) return
  const lines = [...tallies].map(
    ([name, counts]) =>
      `  ${name}: ${[...counts]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}×${n}`)
        .join(' ')}`
  )
  console.log(`${title} (seed ${FUZZ.seed}, ${FUZZ.runs} runs each)\n${lines.join('\n')}`)
}
