/**
 * Issue #2: wake latency (an open wait returns after an inbound push) and ingest throughput of
 * POST /v1/channels/custom/inbound with 16 concurrent clients while one wait consumer drains, proving nothing is
 * lost or duplicated.
 */
import type { LocalServer } from '../e2e/local-server'
import { api, medianBy, ms, percentile, type Baseline, type Bench, type BenchRow } from './bench-kit'

const WAKE_SAMPLES = 500
const INGEST_MESSAGES = 3000
const INGEST_CLIENTS = 16
/** Ingest runs per bench run (`INGEST_RUNS=8` for more); the median is the figure (ingestRows says why). */
const INGEST_RUNS = Number(process.env.INGEST_RUNS ?? 3)
/**
 * `INBOUND_BENCH_PHASES=ingest` runs only that one (both by default: wake, ingest), e.g. to profile the burst alone;
 * `usage` runs 1,000 bare GET /v1/usage calls and nothing else, to profile the baseline GET alone.
 */
const PHASES = new Set((process.env.INBOUND_BENCH_PHASES ?? 'wake,ingest').split(','))

/** The pause before each timed call of a wake round: it lets the wait reach its Durable Object before the push. */
const PAUSE_MS = 15

type WakeTimes = { afterAnswer: number[]; endToEnd: number[]; pausedGet: number[]; lonePush: number[] }

/**
 * Wake latency: each round opens a wait, lets it register, pushes one message and times the wait's return. Then,
 * after the same pause, it times one bare GET /v1/usage of a tenant without accounts (the baseline's request): on a
 * quiet machine every hop pays for waking up, about a millisecond for the trivial `GET /` here, so a call after a
 * pause costs more than the same call back to back, as the baseline is measured. The paired GET is the yardstick
 * timed the same way. Last, after the same pause again, one push to a third tenant that no wait listens on: what the
 * push costs alone, so the rows show the wait's share of push → wait.
 */
async function wakeRounds(server: LocalServer, receiverUrl: string): Promise<WakeTimes> {
  const times: WakeTimes = { afterAnswer: [], endToEnd: [], pausedGet: [], lonePush: [] }
  const wake = await server.newTenant()
  const bare = await server.newTenant()
  const lone = await server.newTenant()
  const pause = () => new Promise((r) => setTimeout(r, PAUSE_MS))
  await api(server, wake.key, 'PUT', '/channels/custom', { webhook_url: `${receiverUrl}/r/bench-wake` })
  await api(server, lone.key, 'PUT', '/channels/custom', { webhook_url: `${receiverUrl}/r/bench-lone` })
  let cursor = (await api(server, wake.key, 'GET', '/messages/wait?timeout_s=0')).json.cursor as string
  for (let i = 0; i < WAKE_SAMPLES; i++) {
    let waitDone = 0
    const waiting = api(server, wake.key, 'GET', `/messages/wait?timeout_s=10&cursor=${cursor}`).then((r) => {
      waitDone = performance.now()
      return r
    })
    await pause()
    const sent = performance.now()
    await api(server, wake.key, 'POST', '/channels/custom/inbound', { customData: { body: `wake ${i}`, fromId: 'bench-user', messageSid: `w${i}` } })
    const answered = performance.now()
    const r = await waiting
    if (r.json.messages.length !== 1) throw new Error(`wake round ${i} returned ${r.json.messages.length} messages`)
    cursor = r.json.cursor
    times.afterAnswer.push(Math.max(0, waitDone - answered))
    times.endToEnd.push(waitDone - sent)
    await pause()
    const asked = performance.now()
    const usage = await api(server, bare.key, 'GET', '/usage')
    if (usage.status !== 200) throw new Error(`wake round ${i}: GET /usage answered ${usage.status}`)
    times.pausedGet.push(performance.now() - asked)
    await pause()
    const pushed = performance.now()
    const alone = await api(server, lone.key, 'POST', '/channels/custom/inbound', {
      customData: { body: `lone ${i}`, fromId: 'bench-user', messageSid: `l${i}` },
    })
    if (alone.status !== 200) throw new Error(`wake round ${i}: the lone push answered ${alone.status}`)
    times.lonePush.push(performance.now() - pushed)
  }
  return times
}

/** The wake rounds' rows: the headline push sent → wait returned, and the paired GET and lone push it is made of. */
function wakeRows({ afterAnswer, endToEnd, pausedGet, lonePush }: WakeTimes, baseline: Baseline): BenchRow[] {
  const wakeP50 = percentile(afterAnswer, 50)
  const wakeP99 = percentile(afterAnswer, 99)
  const e2eP50 = percentile(endToEnd, 50)
  const pausedGetP50 = percentile(pausedGet, 50)
  return [
    // The headline: what an agent sees. Timed from the push's answer, the wake hides the wait's own D1 work.
    {
      metric: `push sent → wait returned p50 (${WAKE_SAMPLES} messages)`,
      value: ms(e2eP50),
      ratio: e2eP50 / baseline.usageP50Ms,
      base: 'round trip',
      target: '≤ 2x baseline',
      ok: e2eP50 <= 2 * baseline.usageP50Ms,
    },
    {
      metric: 'push sent → wait returned p99',
      value: ms(percentile(endToEnd, 99)),
      ratio: percentile(endToEnd, 99) / baseline.usageP50Ms,
      base: 'round trip',
    },
    {
      metric: `bare GET /v1/usage after the same ${PAUSE_MS} ms pause p50 (one per round)`,
      value: ms(pausedGetP50),
      ratio: pausedGetP50 / baseline.usageP50Ms,
      base: 'round trip',
    },
    // Not the goal's yardstick (the issue names the baseline): like for like, for what the ratio above is made of.
    { metric: 'push sent → wait returned p50 ÷ that GET’s p50', value: `${(e2eP50 / pausedGetP50).toFixed(2)}x` },
    // The push with no wait to answer: push → wait less this is the wait's share, on the thread they share here.
    {
      metric: `a push no wait listens for, after the same ${PAUSE_MS} ms pause p50 (one per round)`,
      value: ms(percentile(lonePush, 50)),
      ratio: percentile(lonePush, 50) / baseline.usageP50Ms,
      base: 'round trip',
    },
    { metric: 'wake latency p50 (push answered → wait returned)', value: ms(wakeP50), ratio: wakeP50 / baseline.usageP50Ms, base: 'round trip' },
    { metric: 'wake latency p99', value: ms(wakeP99), target: '< 25 ms', ok: wakeP99 < 25 },
  ]
}

type IngestRun = { rate: number; cpuMsPerMessage: number; received: number; waits: number; lost: number; duplicated: number }

/** One ingest: 16 clients push INGEST_MESSAGES unique messages to a fresh tenant; a consumer drains with consecutive waits. */
async function ingestOnce(server: LocalServer, receiverUrl: string): Promise<IngestRun> {
  const ingest = await server.newTenant()
  await api(server, ingest.key, 'PUT', '/channels/custom', { webhook_url: `${receiverUrl}/r/bench-ingest` })
  let drainCursor = (await api(server, ingest.key, 'GET', '/messages/wait?timeout_s=0')).json.cursor as string
  const seen: string[] = []
  let pushing = true
  let waits = 0
  const consumer = (async () => {
    while (pushing || seen.length < INGEST_MESSAGES) {
      waits++
      const r = await api(server, ingest.key, 'GET', `/messages/wait?timeout_s=2&cursor=${drainCursor}`)
      for (const m of r.json.messages) seen.push(m.text)
      drainCursor = r.json.cursor
      if (!pushing && r.json.messages.length === 0) break
    }
  })()
  let next = 0
  const cpuBefore = server.cpuSeconds()
  const started = performance.now()
  await Promise.all(
    Array.from({ length: INGEST_CLIENTS }, async () => {
      while (next < INGEST_MESSAGES) {
        const i = next++
        const r = await api(server, ingest.key, 'POST', '/channels/custom/inbound', {
          customData: { body: `m${i}`, fromId: `u${i % 50}`, messageSid: `s${i}` },
        })
        if (r.status !== 200) throw new Error(`push ${i} answered ${r.status}`)
      }
    })
  )
  const elapsed = (performance.now() - started) / 1000
  pushing = false
  await consumer
  const unique = new Set(seen)
  return {
    rate: INGEST_MESSAGES / elapsed,
    cpuMsPerMessage: ((server.cpuSeconds() - cpuBefore) * 1000) / INGEST_MESSAGES,
    received: seen.length,
    waits,
    lost: INGEST_MESSAGES - unique.size,
    duplicated: seen.length - unique.size,
  }
}

/**
 * Ingest, INGEST_RUNS times on fresh tenants, judged on the median run: on this shared machine one run of the same
 * code moved by a fifth between runs (418 to 505 msg/s on one commit, 2026-11-27), so a single run near the target
 * says little. Every run's rate is printed; loss and duplicates count over all runs.
 */
async function ingestRows(server: LocalServer, receiverUrl: string, baseline: Baseline): Promise<BenchRow[]> {
  const runs: IngestRun[] = []
  for (let i = 0; i < INGEST_RUNS; i++) runs.push(await ingestOnce(server, receiverUrl))
  const { rate, cpuMsPerMessage } = medianBy(runs, (r) => r.rate)
  const sum = (k: 'received' | 'waits' | 'lost' | 'duplicated') => runs.reduce((n, r) => n + r[k], 0)
  const [lost, duplicated] = [sum('lost'), sum('duplicated')]
  return [
    {
      metric: `ingest throughput (${INGEST_CLIENTS} clients, ${INGEST_MESSAGES} messages, consumer draining)`,
      value: `${rate.toFixed(0)} msg/s (median of ${INGEST_RUNS} runs: ${runs.map((r) => r.rate.toFixed(0)).join(', ')})`,
      // Messages stored per baseline round trip.
      ratio: (rate * baseline.usageP50Ms) / 1000,
      base: 'round trip',
      target: '≥ 500 msg/s',
      ok: rate >= 500,
    },
    // CPU time, unlike throughput, does not move much when other work shares the machine.
    {
      metric: 'server CPU per ingested message (wrangler dev + workerd: Worker, Durable Objects, local D1; consumer included)',
      value: `${ms(cpuMsPerMessage)} (the median run)`,
      ratio: cpuMsPerMessage / baseline.usageCpuMs,
      base: 'cpu',
    },
    // Each wait answer is a whole authenticated request: fewer messages per answer cost more CPU per message.
    { metric: 'messages per wait answer (the consumer’s calls)', value: `${(sum('received') / sum('waits')).toFixed(2)} (${sum('waits')} waits in all runs)` },
    {
      metric: 'lost / duplicated (received by the consumer)',
      value: `${lost} / ${duplicated} (all runs)`,
      target: '0 / 0',
      ok: lost === 0 && duplicated === 0,
    },
  ]
}

export const inboundBench: Bench = {
  name: 'inbound',
  async run({ server, receiver, baseline }) {
    if (PHASES.has('usage')) {
      // A profile of the baseline GET alone: INBOUND_BENCH_PHASES=usage npm run bench -- inbound --profile
      const { key } = await server.newTenant()
      for (let i = 0; i < 1000; i++) await api(server, key, 'GET', '/usage')
      return { title: 'Inbound: baseline GET only', rows: [] }
    }
    const wake = PHASES.has('wake') ? wakeRows(await wakeRounds(server, receiver.url), baseline) : []
    const ingest = PHASES.has('ingest') ? await ingestRows(server, receiver.url, baseline) : []
    return {
      title: 'Inbound: wake latency and ingest (issue #2)',
      rows: [{ metric: 'baseline GET /v1/usage round trip p50 / p99', value: `${ms(baseline.usageP50Ms)} / ${ms(baseline.usageP99Ms)}` }, ...wake, ...ingest],
      notes: [
        `Ingest: 16 clients push \`POST /v1/channels/custom/inbound\` flat out (past wrangler dev's proxy, keep-alive) while one client drains \`GET /v1/messages/wait\` with its cursor; every pushed text must come back exactly once. ${INGEST_RUNS} runs, each on a fresh tenant; the figure is the median run (one run of one commit moved by a fifth between runs on this machine).`,
        `Why ingest is bounded on this machine: under \`wrangler dev\` workerd runs the Worker, every Durable Object, local D1 and the Rate Limiting and static-asset workers on one thread (top -H shows it at ~97 % during the ingest), so throughput is one over that thread's time per message. The 16 clients move in lockstep (16 pushes, one group commit of 48 statements, 16 answers: about 16 messages per wait answer), and an ingested message costs somewhat more than one bare authenticated GET. Where that thread's time goes (\`perf record -a\` during the ingest): V8's runtime 22 %, workerd 18 %, kj and Cap'n Proto 14 %, malloc 9 %, SQLite under 7 %, so hops between workers and what they hand each other, not SQL. With the static-asset router left out (below), main and 58e5f7d ingest about the same here (386 vs 324 and 418 vs 421 msg/s in two full runs of 2026-11-27); what main adds per message is spread thin (the key-scope, audit, idempotency and RateLimit-header middleware, the message's event and reply fields), no function more than a few percent of the profile. The sampled Rate Limiting calls are not it: without the three high-volume limiter bindings, or asking the limiter for one push in 100, alternating runs stayed within the noise. Deployed, the Worker, each AccountDO and D1 run on separate machines.`,
        'Where a bare GET’s server CPU went and what was done (profiles: `npm run bench -- inbound --profile`, `INBOUND_BENCH_PHASES=usage` for the GET alone): wrangler’s local trace collector, on by default, wrote every invocation’s tail events to a SQLite file with an fsync on the Worker’s thread, about 1.7 ms per GET; the benchmarks now start wrangler dev without it (`X_LOCAL_OBSERVABILITY=false`, both servers of a compared run). Each Rate Limiting binding call cost about 0.5 ms of that thread, so the per-key, per-tenant and push limits ask the binding for one request in ten (docs/security.md); each API call first went through the static-asset lookup, now only `/docs/*` does (`run_worker_first`); esbuild’s keepNames wrapped every closure made per request, now off. Miniflare’s static-asset router in front of the Worker cost about 0.5 ms per inbound push and little on a bare GET (ingest 340–370 msg/s with it, 440–615 without, alternating runs); the benchmarks now run without it (the header says why).',
        'An inbound commit answers without waiting for a sync of the AccountDO’s own storage: the inbound tally for /admin/metrics is written a second later (account/totals.ts). Before, strace counted one fsync of the object’s SQLite WAL per push, on top of D1’s.',
        'The wait is answered from the rows the AccountDO just committed (no second D1 read per wake), which is why push sent → wait returned, not the wake after the push’s answer, is the headline.',
        'Why push → wait stays above 2x the baseline here (timed inside the Worker with Date.now(), which workerd advances at each I/O, 500 lone pushes, 2026-11-27, baseline GET p50 1.15 ms): the push’s call into the AccountDO took 2.2–3.4 ms, of which its one D1 batch (three statements) 1.7–2.7 ms; a batch of one tiny insert took 1.11 ms and a batch of three `select 1` 0.97 ms. Under wrangler dev one local D1 round trip costs about a bare GET, before the push’s own request and the wait’s answer; an fdatasync on this disk takes 0.14 ms, so it is the local D1 plumbing, not the disk. That round trip is mostly work on the one thread everything here shares, so answering the wait before the batch (tried 2026-11-28, not kept) left push → wait where it was; with the batch held off 50 ms, the wait came back in about a paused GET.',
        `Why the paired GET: each wake round waits ${PAUSE_MS} ms before the push (the wait must reach its Durable Object first), while the baseline is timed back to back, and on this quiet machine a call after a pause costs more at every hop. Measured 2026-11-27 with the client spinning through the pause instead of sleeping, so only the server idled: the trivial \`GET /\` (a redirect, no D1) took 0.7 ms back to back and 1.7 ms after the pause, \`GET /v1/usage\` 1.5–1.9 and 2.6–3.3 ms, a lone push 3.7 and 4.9–5.3 ms. So the push → wait figure is judged against the baseline, as the issue asks, and the same rounds also time a bare GET after the same pause: the ratio to it (about 2x) is what the push costs over a plain request, one D1 write batch and a Durable Object hop. Per push strace counts one fsync and about 15 WAL pages (the message, its event, the contact and their index entries) of local D1.`,
      ],
    }
  },
}
