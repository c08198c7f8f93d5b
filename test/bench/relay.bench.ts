/**
 * Issues #5 and #10: the relay bridge through the simulator, over real relay processes and one relay link. For alpha
 * and beta alike (relay-channels.ts): inbound frame to wait-return latency and burst throughput, send latency
 * (API → the person's phone) and send throughput, nothing lost or duplicated. For alpha also the relay's resident
 * memory with 1,000 idle sessions, and how long 1,000 sessions take to resume after a relay restart (graceful, and
 * after SIGKILL, which adds the lease).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { eventually, issueRelayToken, spawnRelay, startSim, type RelayProc } from '../e2e/relay-harness'
import type { LocalServer } from '../e2e/local-server'
import type { SimServer } from '../../relay/sim/network/server'
import { ms, percentile, type Baseline, type Bench, type BenchRow } from './bench-kit'
import {
  alphaChannel,
  betaChannel,
  inboundLatency,
  inboundThroughput,
  greet,
  pool,
  SENDS_PER_ACCOUNT_MAX,
  sendLatency,
  sendThroughput,
  type BenchChannel,
  type Linked,
} from './relay-channels'

/**
 * `RELAY_BENCH_SCALE=0.25` shrinks the bridge phases (samples, burst sizes, send accounts) for a loaded machine, where
 * the full burst outlasts its deadline; the default 1 is what docs/PERFORMANCE.md's full run uses.
 */
const SCALE = Number(process.env.RELAY_BENCH_SCALE ?? 1)
const LATENCY_SAMPLES = Math.round(300 * SCALE)
const THROUGHPUT_ACCOUNTS = 20
const THROUGHPUT_PER_ACCOUNT = Math.round(250 * SCALE)
/** Send figures spread over accounts: the free plan allows 50 sends per account and day (SENDS_PER_ACCOUNT_MAX). */
const SEND_LATENCY_ACCOUNTS = Math.max(2, Math.round(5 * SCALE))
const SEND_ACCOUNTS = Math.max(2, Math.round(20 * SCALE))
const IDLE_SESSIONS = 1000
const SETUP_CONCURRENCY = 24
/**
 * `RELAY_BENCH_PHASES=latency,throughput` runs only those (all by default). latency, throughput and sends measure
 * alpha; beta measures beta the same three ways; idle and resume are alpha's 1,000 sessions.
 */
const PHASES = new Set((process.env.RELAY_BENCH_PHASES ?? 'latency,throughput,sends,beta,idle,resume').split(','))

function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN)
  return kb / 1024
}

/** Numbers by purpose: alpha's under +1557, beta's under +1558. */
const phoneOf = (ch: BenchChannel, i: number) => `+${ch.name === 'alpha' ? '1557' : '1558'}${String(i).padStart(7, '0')}`

async function linkMany(ch: BenchChannel, count: number, from: number): Promise<Linked[]> {
  const accounts: Linked[] = []
  await pool(
    Array.from({ length: count }, (_, i) => i),
    8,
    async (i) => void accounts.push(await ch.link(phoneOf(ch, from + i)))
  )
  return accounts
}

/** The four bridge figures of one channel, as report rows. */
async function bridgeRows(server: LocalServer, ch: BenchChannel, baseline: Baseline, parts: { latency: boolean; throughput: boolean; sends: boolean }) {
  const rows: BenchRow[] = []
  const x = (v: number) => `${(v / baseline.usageP50Ms).toFixed(2)}x baseline`
  if (parts.latency) {
    const lat = await inboundLatency(server, ch, await ch.link(phoneOf(ch, 0)), LATENCY_SAMPLES)
    const p50 = percentile(lat, 50)
    rows.push(
      {
        metric: `${ch.name}: bridge latency p50 (upstream message → wait returned, ${LATENCY_SAMPLES} messages)`,
        value: `${ms(p50)} (${x(p50)})`,
        target: '< 10 ms',
        ok: p50 < 10,
      },
      { metric: `${ch.name}: bridge latency p99`, value: ms(percentile(lat, 99)) }
    )
  }
  if (parts.throughput) {
    const tp = await inboundThroughput(server, ch, await linkMany(ch, THROUGHPUT_ACCOUNTS, 100), THROUGHPUT_PER_ACCOUNT)
    rows.push(
      {
        metric: `${ch.name}: bridge throughput over one relay link (${THROUGHPUT_ACCOUNTS} sessions, ${tp.total} messages, each stored in D1 with its event)`,
        value: `${tp.rate.toFixed(0)} msg/s`,
        target: '≥ 1,000 msg/s',
        ok: tp.rate >= 1000,
      },
      { metric: `${ch.name}: lost / duplicated`, value: `${tp.lost} / ${tp.duplicated}`, target: '0 / 0', ok: tp.lost === 0 && tp.duplicated === 0 }
    )
  }
  if (parts.sends) {
    const latAccounts = await linkMany(ch, SEND_LATENCY_ACCOUNTS, 1)
    const burstAccounts = await linkMany(ch, SEND_ACCOUNTS, 200)
    await greet(server, ch, [...latAccounts, ...burstAccounts])
    const lat = await sendLatency(server, ch, latAccounts, SENDS_PER_ACCOUNT_MAX)
    const p50 = percentile(lat, 50)
    const tp = await sendThroughput(server, ch, burstAccounts, SENDS_PER_ACCOUNT_MAX, SEND_ACCOUNTS)
    rows.push(
      { metric: `${ch.name}: send latency p50 (POST /v1/messages → on the person's phone, ${lat.length} sends)`, value: `${ms(p50)} (${x(p50)})` },
      { metric: `${ch.name}: send latency p99`, value: ms(percentile(lat, 99)) },
      {
        metric: `${ch.name}: send throughput (${SEND_ACCOUNTS} sessions, ${SEND_ACCOUNTS} clients, ${tp.total} API sends → on the phones)`,
        value: `${tp.rate.toFixed(0)} msg/s`,
      },
      {
        metric: `${ch.name}: sends lost / duplicated / out of posting order`,
        value: `${tp.lost} / ${tp.duplicated} / ${tp.outOfOrder}`,
        target: '0 / 0 / 0',
        ok: tp.lost === 0 && tp.duplicated === 0 && tp.outOfOrder === 0,
      }
    )
  }
  return rows
}

/**
 * RSS of a fresh relay process: restarted first (so the earlier phases' garbage is gone), measured with the few
 * sessions it resumed, then again with IDLE_SESSIONS linked and idle (heartbeats only).
 */
async function idleSessions(
  alpha: BenchChannel,
  sim: SimServer,
  restart: () => Promise<RelayProc>
): Promise<{ before: number; beforeSessions: number; rss: number; setupS: number; relay: RelayProc }> {
  const relay = await restart()
  await new Promise((r) => setTimeout(r, 3000))
  const beforeSessions = sim.network.all().filter((p) => p.open.size === 1).length
  const before = rssMiB(relay.proc.pid!)
  const started = performance.now()
  await pool(
    Array.from({ length: IDLE_SESSIONS - beforeSessions }, (_, i) => i),
    SETUP_CONCURRENCY,
    async (i) => void (await alpha.link(phoneOf(alpha, 10_000 + i)))
  )
  const setupS = (performance.now() - started) / 1000
  await new Promise((r) => setTimeout(r, 5000))
  return { before, beforeSessions, rss: rssMiB(relay.proc.pid!), setupS, relay }
}

async function resume(sim: SimServer, kill: () => Promise<unknown>, start: () => RelayProc): Promise<{ seconds: number; relay: RelayProc }> {
  const logins = new Map(sim.network.all().map((p) => [p.phone, p.logins]))
  await kill()
  const t0 = performance.now()
  const relay = start()
  await eventually(
    () => sim.network.all().every((p) => !p.linked || (p.open.size === 1 && p.logins > (logins.get(p.phone) ?? 0))),
    180_000,
    'every session resumed'
  )
  return { seconds: (performance.now() - t0) / 1000, relay }
}

export const relayBench: Bench = {
  name: 'relay',
  async run({ server, baseline }) {
    const sim = await startSim()
    const { token } = await issueRelayToken(server)
    let relay = spawnRelay(server, token, sim)
    const rows: BenchRow[] = [{ metric: 'baseline GET /v1/usage round trip p50 / p99', value: `${ms(baseline.usageP50Ms)} / ${ms(baseline.usageP99Ms)}` }]
    let betaSessions = 0
    try {
      await relay.healthUrl
      await eventually(async () => (await fetch(await relay.healthUrl)).ok, 30_000, 'relay link open')

      const alpha = alphaChannel(server, sim)
      rows.push(
        ...(await bridgeRows(server, alpha, baseline, { latency: PHASES.has('latency'), throughput: PHASES.has('throughput'), sends: PHASES.has('sends') }))
      )
      if (PHASES.has('beta')) {
        rows.push(...(await bridgeRows(server, betaChannel(server, sim), baseline, { latency: true, throughput: true, sends: true })))
        betaSessions = 1 + THROUGHPUT_ACCOUNTS + SEND_LATENCY_ACCOUNTS + SEND_ACCOUNTS
      }

      if (PHASES.has('idle')) {
        const restart = async () =>
          (
            await resume(
              sim,
              () => relay.kill('SIGTERM'),
              () => spawnRelay(server, token, sim)
            )
          ).relay
        const idle = await idleSessions(alpha, sim, restart)
        relay = idle.relay
        const perSession = ((idle.rss - idle.before) * 1024) / (IDLE_SESSIONS - idle.beforeSessions)
        rows.push(
          {
            metric: `relay resident memory, fresh process with ${idle.beforeSessions} alpha sessions${betaSessions ? ` and ${betaSessions} beta sessions` : ''}`,
            value: `${idle.before.toFixed(0)} MiB`,
          },
          {
            metric: `relay resident memory with ${IDLE_SESSIONS} idle sim sessions`,
            value: `${idle.rss.toFixed(0)} MiB (${perSession.toFixed(0)} KiB per added session)`,
          },
          {
            metric: `time to link ${IDLE_SESSIONS - idle.beforeSessions} numbers (QR, link, connected; ${SETUP_CONCURRENCY} at a time)`,
            value: `${idle.setupS.toFixed(1)} s`,
          }
        )
      }

      if (PHASES.has('resume')) {
        const graceful = await resume(
          sim,
          () => relay.kill('SIGTERM'),
          () => spawnRelay(server, token, sim)
        )
        relay = graceful.relay
        rows.push({ metric: `${IDLE_SESSIONS} sessions resumed after a relay restart (SIGTERM drain, new process)`, value: `${graceful.seconds.toFixed(1)} s` })
        const crash = await resume(
          sim,
          () => relay.kill('SIGKILL'),
          () => spawnRelay(server, token, sim)
        )
        relay = crash.relay
        rows.push({
          metric: `${IDLE_SESSIONS} sessions resumed after a relay crash (SIGKILL; includes the 10 s lease)`,
          value: `${crash.seconds.toFixed(1)} s`,
        })
        const twice = sim.network.all().filter((p) => p.maxConcurrent > 1).length
        rows.push({ metric: 'numbers that ever had two live sessions', value: String(twice), target: '0', ok: twice === 0 })
      }
    } catch (err) {
      writeFileSync('/tmp/relay-bench-wrangler.log', server.output())
      writeFileSync('/tmp/relay-bench-relay.log', relay.output())
      console.error(`relay bench failed; logs in /tmp/relay-bench-wrangler.log and /tmp/relay-bench-relay.log`)
      throw err
    } finally {
      console.log(rows.map((r) => `  ${r.metric}: ${r.value}`).join('\n'))
      await relay.kill('SIGKILL')
      await sim.close()
    }
    return {
      title: 'Relay bridge through the simulator (issue #5)',
      rows,
      notes: [
        'One relay process (`node --import tsx relay/main.ts`, sim driver) on one link to `wrangler dev`; the simulated network runs in the benchmark process and injects upstream messages directly, so the figures are the bridge, not the control API.',
        'Latency: an upstream message reaches the relay over its device socket, goes to the edge as an `inbound` frame, is stored by the AccountDO in D1 and wakes the open `GET /v1/messages/wait`; measured until the wait answer arrives.',
        'Throughput: 20 sessions on one link receive a burst; every message is stored in D1 with its `message.received` event, counted and checked for loss and duplicates in the local D1 file. Frames of one session are stored in order and group-committed (up to 50 per D1 batch), sessions in parallel.',
        'Resume: from the new relay process starting until every number has a live session again, each restored from its encrypted session at the edge (no QR code).',
        'What bounds latency and throughput here is `wrangler dev` on a shared 2-core machine, not the link: a bare authenticated GET already costs the baseline above (and about as much server CPU as an ingested message, see the inbound table), and an inbound message needs one D1 batch to store it (contact, message, event: one round trip, no read first) plus the wait\u2019s own D1 read before it can answer; local D1 serialises every commit in one SQLite. The relay adds well under a millisecond per frame (heartbeat round trip through the same link: < 1 ms). Group commit (messages of a burst share D1 batches) is what lifts a burst above one commit per message. Handing freshly committed rows straight to open waits would save the second round trip; it is not done, because the wait\u2019s re-read is what guarantees no message is skipped or repeated.',
      ],
    }
  },
}
