// `npm run fuzz`: the fuzz suites (test/worker/fuzz) with many runs and a fresh seed, printed first so any failure
// can be replayed. FUZZ_RUNS (default 200) and FUZZ_SEED choose; FUZZ_PATH replays one case; extra arguments go to
// vitest (`npm run fuzz -- -t 'POST /messages'`).
import { spawnSync } from 'node:child_process'
import { randomInt } from 'node:crypto'

const seed = process.env.FUZZ_SEED || String(randomInt(1, 2 ** 31 - 1))
const runs = process.env.FUZZ_RUNS || '200'
console.log(`[fuzz] seed ${seed}, ${runs} runs per operation; replay with FUZZ_SEED=${seed} FUZZ_RUNS=${runs} npm run fuzz`)
const r = spawnSync(
  'vitest',
  ['run', '--config', 'test/vitest.config.ts', '--project', 'worker', '--testTimeout', '0', 'test/worker/fuzz', ...process.argv.slice(2)],
  {
    stdio: 'inherit',
    env: { ...process.env, FUZZ_SEED: seed, FUZZ_RUNS: runs, FUZZ_REPORT: '1' },
  }
)
if (r.status !== 0) console.log(`[fuzz] failed with seed ${seed}; each failure above names its FUZZ_PATH`)
process.exit(r.status ?? 1)
