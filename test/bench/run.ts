/**
 * `npm run bench`: starts the real local server (wrangler dev) and a local receiver, measures the baseline round
 * trip, runs every benchmark, prints the figures and writes docs/PERFORMANCE.md. `npm run bench -- webhooks` runs one
 * (printing only); `npm run bench -- idle` needs no server (it counts Durable Object wake-ups on an injected clock in
 * workerd); `npm run bench -- capacity` counts D1 statements and stored bytes per operation and rewrites the figures in
 * docs/CAPACITY.md (it starts its own server). `--profile` takes a CPU profile of the Worker's isolate during each selected benchmark and prints
 * where the time went (test/bench/profile.ts); the raw profiles go to the temp directory. Every figure is printed with
 * the same run's baseline, its ratio, target and met/not met, and a run on a loaded machine is not recorded (report.ts).
 * The servers run without wrangler dev's static-asset router (test/e2e/local-server.ts says why); `BENCH_ASSET_ROUTER=1`
 * keeps it. `--compare <dir>` (or `BENCH_COMPARE=<dir>`), with <dir> a checkout of another commit whose dependencies are
 * installed: right after this tree's figures, the same command starts that checkout's wrangler dev and measures there,
 * with this tree's bench code, the baseline and the inbound bench; docs/PERFORMANCE.md shows them as the "Before" of the
 * inbound figures (issue 23 runs it against 58e5f7d). A run of selected benches writes its markdown to the temp
 * directory instead of docs/PERFORMANCE.md.
 */
// First, before anything loads `telegram`: the simulated beta data centre runs in this process and writes its updates
// with GramJS's serialiser, which keeps the long writer it finds at load (relay/beta/tl-longs.ts), as the relay does.
import '../../relay/beta/tl-longs'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir, totalmem } from 'node:os'
import { join, resolve } from 'node:path'
import { requireFastLongsInApi } from '../../relay/beta/api-longs'
import { startReceiver } from '../fixtures/receiver'
import { repoRoot, startLocalServer } from '../e2e/local-server'
import { alphaDriverBench } from './alpha-driver.bench'
import { benchArgs } from './bench-args'
import { measureBaseline, ms, type Baseline, type Bench, type BenchReport, type StandaloneBench } from './bench-kit'
import { capacityBench } from './capacity.bench'
import { idleBench } from './idle.bench'
import { inboundBench } from './inbound.bench'
import { mcpBench } from './mcp.bench'
import { mediaBench } from './media.bench'
import { devBundle, formatSummary, profiled } from './profile'
import { relayBench } from './relay.bench'
import { interleavedCpu } from './interleaved'
import { type ComparedFigures, HISTORY_FILE, type NamedReport, performanceDoc, speedTargets } from './performance-doc'
import { currentLoad, formatLine, formatLoad, isLoaded } from './report'
import { webhooksBench } from './webhooks.bench'

requireFastLongsInApi('test/bench/run.ts')

const ALL: Array<Bench | StandaloneBench> = [inboundBench, relayBench, webhooksBench, mcpBench, alphaDriverBench, mediaBench, idleBench, capacityBench]

/** Benches that `--compare` also runs against the other checkout (issue 23 compares the inbound figures). */
const COMPARED = new Set(['inbound'])

const args = process.argv.slice(2)
const { only, profile, compareDir } = benchArgs(args, process.env)
if (compareDir && !existsSync(join(compareDir, 'node_modules', '.bin', 'wrangler')))
  throw new Error(`--compare ${compareDir}: not a checkout with its dependencies installed (no node_modules/.bin/wrangler)`)
/** Left out unless BENCH_ASSET_ROUTER=1: a dev-only hop (test/e2e/local-server.ts wranglerConfig says why). */
const assetRouter = process.env.BENCH_ASSET_ROUTER === '1'
const selected = only.length ? ALL.filter((b) => only.includes(b.name)) : ALL
const loadAtStart = currentLoad()
console.log(
  `static-asset router in front of the Worker: ${assetRouter ? 'on (BENCH_ASSET_ROUTER=1)' : 'left out (deployed, Cloudflare routes outside the Worker; BENCH_ASSET_ROUTER=1 keeps it)'}`
)
console.log(
  `load average (1/5/15 min) at start: ${formatLoad(loadAtStart)} on ${cpus().length} cores${isLoaded(loadAtStart) ? ' — LOADED: figures are indicative only' : ''}`
)
const reports: NamedReport[] = []
let failed = false
let baselineUsed: Baseline | undefined
let compared: ComparedFigures | undefined

function print(name: string, report: BenchReport, baseline: Baseline | undefined, into: NamedReport[]): void {
  into.push({ name, report })
  for (const r of report.rows) {
    if (r.ok === false && into === reports) failed = true
    console.log(formatLine(r, baseline))
  }
}

const baselineText = (b: Baseline) =>
  `p50 ${ms(b.usageP50Ms)}, p99 ${ms(b.usageP99Ms)} (${b.samples} calls); through the dev proxy p50 ${ms(b.proxiedUsageP50Ms)}; server CPU ${ms(b.usageCpuMs)} per call`

const standalone = selected.filter((b): b is StandaloneBench => 'standalone' in b)
const withServer = selected.filter((b): b is Bench => !('standalone' in b))
for (const bench of standalone) {
  console.log(`\n== ${bench.name}`)
  print(bench.name, await bench.run(), undefined, reports)
}
const receiver = withServer.length > 0 || compareDir ? await startReceiver() : null
try {
  const server = withServer.length > 0 ? await startLocalServer({ assetRouter }) : null
  try {
    if (server && receiver) {
      const baseline = await measureBaseline(server)
      baselineUsed = baseline
      console.log(`baseline GET /v1/usage: ${baselineText(baseline)}`)
      for (const bench of withServer) {
        console.log(`\n== ${bench.name}`)
        let report: BenchReport
        if (profile) {
          const rawPath = join(tmpdir(), `${bench.name}-${Date.now()}.cpuprofile`)
          const out = await profiled(server.inspectorPort, rawPath, devBundle(repoRoot), () => bench.run({ server, receiver, baseline }))
          report = out.result
          console.log(`${formatSummary(out.summary)}\n\nraw profile: ${rawPath}\n`)
        } else {
          report = await bench.run({ server, receiver, baseline })
        }
        print(bench.name, report, baseline, reports)
      }
    }
  } finally {
    await server?.stop()
  }
  if (compareDir && receiver) compared = await measureCompared(resolve(compareDir), receiver)
} finally {
  await receiver?.close()
}

/** The other checkout, right after this tree on the same machine: its baseline and the COMPARED benches, this tree's code. */
async function measureCompared(dir: string, rcv: NonNullable<typeof receiver>): Promise<ComparedFigures> {
  const sha = execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
  console.log(`\n== compared commit ${sha} (${dir}): same benches, its wrangler dev`)
  const done: NamedReport[] = []
  const other = await startLocalServer({ root: dir, assetRouter })
  let baseline: Baseline
  try {
    baseline = await measureBaseline(other)
    console.log(`baseline GET /v1/usage at ${sha}: ${baselineText(baseline)}`)
    for (const bench of withServer.filter((b) => COMPARED.has(b.name))) {
      console.log(`\n== ${bench.name} at ${sha}`)
      print(bench.name, await bench.run({ server: other, receiver: rcv, baseline }), baseline, done)
    }
  } finally {
    await other.stop()
  }
  // The GET CPU goal, from both trees' servers up at once in alternating rounds, on fresh pairs (interleaved.ts says why).
  const cpu = await interleavedCpu(
    () => startLocalServer({ assetRouter }),
    () => startLocalServer({ root: dir, assetRouter })
  )
  console.log(
    `GET /v1/usage server CPU per call, interleaved (${cpu.rounds} rounds of ${cpu.callsPerRound} calls over ${cpu.sets} fresh pairs of servers): median round this tree ${ms(cpu.mineMs)}, ${sha} ${ms(cpu.theirsMs)}; median pair ratio ${cpu.ratio.toFixed(2)}x`
  )
  return { sha, dir, baseline, reports: done, cpu }
}

const loadAtEnd = currentLoad()
const loaded = isLoaded(loadAtStart) || isLoaded(loadAtEnd)
console.log(`\nload average (1/5/15 min) at end: ${formatLoad(loadAtEnd)}${loaded ? ' — LOADED run: not a result' : ''}`)

const doneWhen = speedTargets({ baseline: baselineUsed, reports, compared }).filter((r) => r.now !== 'not measured')
if (doneWhen.length > 0) {
  console.log('\nissue 23 targets:')
  for (const r of doneWhen)
    console.log(
      `${r.met === undefined ? ' ' : r.met ? '✓' : '✗'} ${r.goal}: ${r.now}${compared ? ` | ${compared.sha} ${r.compared}` : ''} | target ${r.target}`
    )
}

if (!profile) {
  const docPath = join(repoRoot, 'docs/PERFORMANCE.md')
  const historyPath = join(repoRoot, HISTORY_FILE)
  const text = performanceDoc({
    command: ['npm run bench', ...(args.length ? ['--', ...args] : [])].join(' '),
    date: new Date(),
    machine: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`,
    cores: cpus().length,
    assetRouter,
    loadAtStart,
    loadAtEnd,
    loaded,
    baseline: baselineUsed,
    reports,
    compared,
    previous: existsSync(docPath) ? readFileSync(docPath, 'utf8') : undefined,
    history: existsSync(historyPath) ? readFileSync(historyPath, 'utf8') : undefined,
  })
  // Only a full run on a quiet machine is a result; anything else leaves its markdown in the temp directory.
  if (only.length === 0 && !loaded) {
    writeFileSync(docPath, text)
    console.log('\nwrote docs/PERFORMANCE.md')
  } else {
    const path = join(tmpdir(), `PERFORMANCE-${loaded ? 'loaded' : 'partial'}-${Date.now()}.md`)
    writeFileSync(path, text)
    console.log(`\n${loaded ? 'loaded machine' : 'selected benches only'}: docs/PERFORMANCE.md left as it was; this run's report is ${path}`)
  }
}
if (failed) console.log('\nsome targets were not met (see above)')
