/**
 * `npm run bench -- capacity` (issue 22 §5): what the data tier spends per inbound message, send, webhook delivery
 * and wait answer, measured, and docs/CAPACITY.md's figures rewritten from it. Two measurements, both counts of
 * bytes and statements rather than times, so a loaded machine does not move them:
 *
 * - D1 statements, round trips, rows read and written: test/worker/db/capacity.test.ts runs the real Worker and
 *   Durable Objects in workerd and sums D1's own `meta` for each operation; this reads the figures it prints.
 * - Bytes: the real local server (`wrangler dev`) does each operation many times, and SQLite's `dbstat` on its local
 *   D1 file (read with node:sqlite) says how many bytes each table and index grew by, pages included.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { startReceiver } from '../fixtures/receiver'
import { repoRoot, startLocalServer, type LocalServer } from '../e2e/local-server'
import type { BenchReport, BenchRow, StandaloneBench } from './bench-kit'

const FIGURE = /capacity figure (\{.*\})/
const INBOUND = 2000
const SENDERS = 200
const HOOKED = 1000
const SEND_TENANTS = 10
const SENDS_PER_TENANT = 50
const PEOPLE_PER_TENANT = 17
/** Tenants whose 50 sends each carry an Idempotency-Key. */
const KEYED_TENANTS = 5
/** D1's ceiling per database (not raisable), and the share of it a plan should count on. */
const DB_BYTES = 10 * 1000 ** 3
const FILL = 0.8

type Sizes = Map<string, { table: string; bytes: number; payload: number }>
type StatementFigure = { name: string; count: number; statements: number; roundTrips: number; rowsRead: number; rowsWritten: number }

/** The local D1 file of a wrangler dev state directory. */
function d1File(stateDir: string): string {
  const dir = join(stateDir, 'v3', 'd1', 'miniflare-D1DatabaseObject')
  const file = readdirSync(dir).find((f) => f.endsWith('.sqlite') && f !== 'metadata.sqlite')
  if (!file) throw new Error(`no D1 database under ${dir}`)
  return join(dir, file)
}

/** Bytes per table and index (pages in use, and the payload in them), from dbstat. */
function sizes(file: string): Sizes {
  const db = new DatabaseSync(file, { readOnly: true })
  try {
    const owners = new Map(
      db
        .prepare("SELECT name, tbl_name AS tbl FROM sqlite_master WHERE type IN ('table', 'index')")
        .all()
        .map((r) => [String(r.name), String(r.tbl)])
    )
    const out: Sizes = new Map()
    for (const r of db.prepare('SELECT name, sum(pgsize) AS bytes, sum(payload) AS payload FROM dbstat GROUP BY name').all()) {
      const name = String(r.name)
      out.set(name, { table: owners.get(name) ?? name, bytes: Number(r.bytes), payload: Number(r.payload) })
    }
    return out
  } finally {
    db.close()
  }
}

/** Growth per operation between two snapshots, per table (its indexes included), over `count` operations. */
function perOperation(before: Sizes, after: Sizes, count: number): Map<string, { bytes: number; payload: number }> {
  const out = new Map<string, { bytes: number; payload: number }>()
  for (const [name, a] of after) {
    const b = before.get(name) ?? { bytes: 0, payload: 0 }
    const grown = out.get(a.table) ?? { bytes: 0, payload: 0 }
    grown.bytes += (a.bytes - b.bytes) / count
    grown.payload += (a.payload - b.payload) / count
    out.set(a.table, grown)
  }
  for (const [t, g] of out) if (Math.abs(g.bytes) < 0.5 && Math.abs(g.payload) < 0.5) out.delete(t)
  return out
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

function countIn(file: string, sql: string, ...params: string[]): number {
  const db = new DatabaseSync(file, { readOnly: true })
  try {
    return Number(db.prepare(sql).get(...params)?.n ?? 0)
  } finally {
    db.close()
  }
}

async function ok(server: LocalServer, key: string, method: string, path: string, body: unknown, status: number): Promise<void> {
  const r = await server.api(key, method, path, body)
  if (r.status !== status) throw new Error(`${method} ${path} answered ${r.status}: ${JSON.stringify(r.json)}`)
}

/** Runs `count` calls, `parallel` at a time. */
async function pool(count: number, parallel: number, one: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) await one(next++)
    })
  )
}

type ByteFigures = {
  inbound: Map<string, { bytes: number; payload: number }>
  delivery: Map<string, { bytes: number; payload: number }>
  send: Map<string, { bytes: number; payload: number }>
  /** What an Idempotency-Key adds to a send: its row in idempotency_keys (kept 24 h). */
  idempotency: Map<string, { bytes: number; payload: number }>
}

async function measureBytes(): Promise<ByteFigures> {
  const server = await startLocalServer()
  const receiver = await startReceiver()
  try {
    const file = d1File(server.stateDir)
    const connect = async (key: string, channel: string) => ok(server, key, 'PUT', '/channels/custom', { webhook_url: `${receiver.url}/r/${channel}` }, 200)
    const push = (key: string, i: number, from: string) =>
      ok(
        server,
        key,
        'POST',
        '/channels/custom/inbound',
        { customData: { body: `message number ${i} from ${from}, a line of ordinary length`, fromId: from, messageSid: `sid-${from}-${i}` } },
        200
      )

    // Inbound: one tenant, no webhook, 200 people writing 10 messages each.
    const a = await server.newTenant()
    await connect(a.key, 'capacity-a')
    const s0 = sizes(file)
    await pool(INBOUND, 8, (i) => push(a.key, i, `person-${i % SENDERS}`))
    const s1 = sizes(file)

    // Webhook deliveries: another tenant with one subscription to message.received, every delivery answered 200.
    const b = await server.newTenant()
    await connect(b.key, 'capacity-b')
    await ok(server, b.key, 'POST', '/webhooks', { url: `${receiver.url}/r/capacity-hooks`, subscribed_to: ['message.received'], name: 'capacity' }, 201)
    await pool(HOOKED, 8, (i) => push(b.key, i, `person-${i % SENDERS}`))
    await until('webhook deliveries', () => receiver.log('capacity-hooks').length >= HOOKED)
    await until('delivery outcomes', () => countIn(file, "SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'") === 0)
    const s2 = sizes(file)

    /** `count` tenants, each with 17 people who wrote first, and their 50 replies (the free plan's daily cap), delivered. */
    const sendingTenants = async (count: number, label: string) => {
      const senders: { key: string; channel: string }[] = []
      for (let t = 0; t < count; t++) {
        const s = await server.newTenant()
        await connect(s.key, `capacity-${label}-${t}`)
        for (let p = 0; p < PEOPLE_PER_TENANT; p++) await push(s.key, p, `friend-${p}`)
        senders.push({ ...s, channel: `capacity-${label}-${t}` })
      }
      const before = sizes(file)
      await pool(count * SENDS_PER_TENANT, 8, async (i) => {
        const s = senders[i % count]!
        const res = await fetch(`${server.url}/v1/messages`, {
          method: 'POST',
          // Keyed sends carry their own Idempotency-Key each, as a careful client's do.
          headers: { 'X-API-Key': s.key, 'Content-Type': 'application/json', ...(label === 'keyed' ? { 'Idempotency-Key': crypto.randomUUID() } : {}) },
          body: JSON.stringify({
            to: { external_id: `friend-${Math.floor(i / count) % PEOPLE_PER_TENANT}` },
            text: `reply number ${i}, a line of ordinary length`,
          }),
        })
        if (res.status !== 202) throw new Error(`POST /messages answered ${res.status}: ${await res.text()}`)
      })
      await until(`${label} sends delivered`, () => senders.every((s) => receiver.log(s.channel).length >= SENDS_PER_TENANT))
      await until(`${label} sends settled`, () => countIn(file, "SELECT count(*) AS n FROM messages WHERE direction = 'outbound' AND status = 'queued'") === 0)
      return before
    }

    // Sends: 10 tenants' 50 replies each.
    const s3 = await sendingTenants(SEND_TENANTS, 'send')
    const s4 = sizes(file)

    // Sends with an Idempotency-Key: the same again from fresh tenants; a key is its row in idempotency_keys (the
    // messages and events it sent are counted by the sends above).
    const s5 = await sendingTenants(KEYED_TENANTS, 'keyed')
    const s6 = sizes(file)

    // The webhook tenant's own messages, events and contacts grew too (as the inbound did): a delivery is its rows in
    // the webhook tables.
    const delivery = new Map([...perOperation(s1, s2, HOOKED)].filter(([t]) => t.startsWith('webhook')))
    const idempotency = new Map([...perOperation(s5, s6, KEYED_TENANTS * SENDS_PER_TENANT)].filter(([t]) => t === 'idempotency_keys'))
    return { inbound: perOperation(s0, s1, INBOUND), delivery, send: perOperation(s3, s4, SEND_TENANTS * SENDS_PER_TENANT), idempotency }
  } finally {
    await Promise.all([server.stop(), receiver.close()])
  }
}

function statementFigures(): { figures: StatementFigure[]; passed: boolean; output: string } {
  const vitest = spawnSync(
    join(repoRoot, 'node_modules', '.bin', 'vitest'),
    ['run', '--config', 'test/vitest.config.ts', '--project', 'worker', 'test/worker/db/capacity.test.ts', '--reporter', 'verbose'],
    { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } }
  )
  const output = `${vitest.stdout}\n${vitest.stderr}`
  const figures = [...output.matchAll(new RegExp(FIGURE, 'g'))].map((m) => JSON.parse(m[1]!) as StatementFigure)
  return { figures, passed: vitest.status === 0, output }
}

const B = (n: number) => `${Math.round(n)} B`
const sum = (m: Map<string, { bytes: number }>) => [...m.values()].reduce((n, g) => n + g.bytes, 0)
const parts = (m: Map<string, { bytes: number; payload: number }>) =>
  [...m]
    .sort((x, y) => y[1].bytes - x[1].bytes)
    .map(([t, g]) => `${t} ${B(g.bytes)}`)
    .join(', ')

/**
 * Bytes one inbound message a day keeps stored in steady state: its message and contact share for the retention,
 * its event and each subscription's delivery for the 7-day log, an audit row (if any) for 90 days.
 */
function retainedPerDaily(bytes: ByteFigures, retentionDays: number, subscriptions: number): number {
  const pick = (m: Map<string, { bytes: number }>, t: string) => m.get(t)?.bytes ?? 0
  const messageSide = pick(bytes.inbound, 'messages') + pick(bytes.inbound, 'contacts') + pick(bytes.inbound, 'account_stats')
  const sevenDays = pick(bytes.inbound, 'events') + subscriptions * pick(bytes.delivery, 'webhook_deliveries')
  return messageSide * retentionDays + sevenDays * 7 + pick(bytes.inbound, 'audit_log') * 90
}

/** Retained bytes of a traffic in steady state, and the databases it needs at FILL of the ceiling. */
function databases(perDay: number, retentionDays: number, bytes: ByteFigures, subscriptions: number): { gb: number; dbs: number } {
  const total = perDay * retainedPerDaily(bytes, retentionDays, subscriptions)
  return { gb: total / 1000 ** 3, dbs: Math.max(1, Math.ceil(total / (DB_BYTES * FILL))) }
}

function writeDoc(report: BenchReport, bytes: ByteFigures, figures: StatementFigure[]): void {
  const path = join(repoRoot, 'docs/CAPACITY.md')
  const doc = readFileSync(path, 'utf8')
  const start = '<!-- capacity:figures -->'
  const end = '<!-- /capacity:figures -->'
  const lines = [
    start,
    `Measured by \`npm run bench -- capacity\` on ${new Date().toISOString().slice(0, 10)} (test/bench/capacity.bench.ts), ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}.`,
    '',
    '| Operation | D1 statements | Round trips | Rows read | Rows written | Bytes stored (pages, by table) |',
    '|---|---|---|---|---|---|',
  ]
  const byName = (prefix: string) => figures.find((f) => f.name.startsWith(prefix))
  const inbound = byName('inbound message (')
  const hooked = byName('inbound message with')
  const send = byName('send')
  const wait = byName('wait')
  const row = (label: string, f: StatementFigure | undefined, stored: string) =>
    lines.push(`| ${label} | ${f?.statements ?? '?'} | ${f?.roundTrips ?? '?'} | ${f?.rowsRead ?? '?'} | ${f?.rowsWritten ?? '?'} | ${stored} |`)
  row('Inbound message (custom push, no webhook)', inbound, `${B(sum(bytes.inbound))}: ${parts(bytes.inbound)}`)
  const delivery =
    hooked && inbound
      ? {
          ...hooked,
          statements: hooked.statements - inbound.statements,
          roundTrips: hooked.roundTrips - inbound.roundTrips,
          rowsRead: Math.round((hooked.rowsRead - inbound.rowsRead) * 100) / 100,
          rowsWritten: Math.round((hooked.rowsWritten - inbound.rowsWritten) * 100) / 100,
        }
      : undefined
  row('Webhook delivery (one subscription, answered 200)', delivery, `${B(sum(bytes.delivery))}: ${parts(bytes.delivery)}`)
  row('Send (queued → sent, custom channel)', send, `${B(sum(bytes.send))}: ${parts(bytes.send)}`)
  row('Wait answer (one message, from a cursor)', wait, '0 B (reads only)')
  row('Idempotency-Key on a send (on top of the send; kept 24 h)', byName('idempotency key'), `${B(sum(bytes.idempotency))}: ${parts(bytes.idempotency)}`)
  lines.push(
    '',
    '| Retention | Bytes kept per inbound message a day (no webhook / one subscription) | Inbound messages a day one database holds (80 % of 10 GB, one subscription) |',
    '|---|---|---|'
  )
  for (const days of [7, 30, 90, 365]) {
    const [none, one] = [retainedPerDaily(bytes, days, 0), retainedPerDaily(bytes, days, 1)]
    lines.push(
      `| ${days} days | ${(none / 1000).toFixed(1)} KB / ${(one / 1000).toFixed(1)} KB | ${Math.floor((DB_BYTES * FILL) / one).toLocaleString('en-US')} |`
    )
  }
  lines.push('', '| Messages a day | Retention | Webhook subscriptions | Retained data | Databases (10 GB each, filled to 80 %) |', '|---|---|---|---|---|')
  for (const perDay of [10_000, 100_000, 1_000_000, 10_000_000]) {
    for (const days of [30, 90, 365]) {
      const d = databases(perDay, days, bytes, 1)
      lines.push(`| ${perDay.toLocaleString('en-US')} | ${days} days | 1 | ${d.gb.toFixed(1)} GB | ${d.dbs} |`)
    }
  }
  lines.push(end)
  const from = doc.indexOf(start)
  const to = doc.indexOf(end)
  if (from < 0 || to < 0) throw new Error(`docs/CAPACITY.md lacks the ${start} … ${end} markers`)
  writeFileSync(path, doc.slice(0, from) + lines.join('\n') + doc.slice(to + end.length))
  report.notes?.push('wrote the figures into docs/CAPACITY.md')
}

export const capacityBench: StandaloneBench = {
  name: 'capacity',
  standalone: true,
  async run() {
    const statements = statementFigures()
    const rows: BenchRow[] = statements.figures.map((f) => ({
      metric: `${f.name}: D1 statements / round trips / rows read / rows written (per operation, ${f.count} measured)`,
      value: `${f.statements} / ${f.roundTrips} / ${f.rowsRead} / ${f.rowsWritten}`,
      ok: statements.passed,
    }))
    if (!statements.passed || statements.figures.length === 0) {
      rows.push({ metric: 'test/worker/db/capacity.test.ts', value: 'failed', ok: false })
      console.log(statements.output.slice(-4000))
    }
    const bytes = await measureBytes()
    rows.push(
      { metric: `bytes stored per inbound message (${INBOUND} pushes from ${SENDERS} people)`, value: `${B(sum(bytes.inbound))}: ${parts(bytes.inbound)}` },
      { metric: `bytes stored per webhook delivery (${HOOKED} deliveries)`, value: `${B(sum(bytes.delivery))}: ${parts(bytes.delivery)}` },
      { metric: `bytes stored per send (${SEND_TENANTS * SENDS_PER_TENANT} sends, delivered)`, value: `${B(sum(bytes.send))}: ${parts(bytes.send)}` },
      {
        metric: `bytes an Idempotency-Key adds to a send (${KEYED_TENANTS * SENDS_PER_TENANT} keyed sends)`,
        value: `${B(sum(bytes.idempotency))}: ${parts(bytes.idempotency)}`,
      }
    )
    const report: BenchReport = {
      title: 'Capacity: D1 work and bytes per operation',
      rows,
      notes: [
        'Statements and rows: D1 meta summed in workerd (test/worker/db/capacity.test.ts). Bytes: dbstat page sizes of the local D1 file after the operations ran against wrangler dev.',
      ],
    }
    writeDoc(report, bytes, statements.figures)
    return report
  },
}
