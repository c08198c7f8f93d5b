/**
 * Starts the real local gateway (wrangler dev with local D1 and Durable Objects) on free ports with a throwaway
 * state directory, for the e2e tests and the benchmarks. Migrations are applied exactly as `npm start` does, once per
 * machine (migrated-state.ts), and each server starts from a copy.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { copyMigratedState } from './migrated-state'

export const repoRoot = join(import.meta.dirname, '../..')

export type LocalServer = {
  /** The address `npm start` users see: wrangler dev's local proxy in front of the Worker. */
  url: string
  /**
   * The Worker itself, past wrangler dev's reload proxy (read from wrangler's debug log). On a 2-core machine that
   * proxy costs about half the throughput, so benchmarks measure the gateway here and report the proxy separately.
   */
  directUrl: string
  adminToken: string
  /**
   * wrangler dev's DevTools inspector (one client at a time): `ws://127.0.0.1:<port>/ws` reaches the Worker's isolate,
   * Durable Objects included. test/bench/profile.ts takes CPU profiles through it.
   */
  inspectorPort: number
  /** wrangler's --persist-to directory (local D1 and Durable Object state). */
  stateDir: string
  /**
   * CPU seconds (user + system) used so far by wrangler dev and everything it started (workerd: the Worker, its
   * Durable Objects and local D1). Unlike wall time it holds still when other work shares the machine.
   */
  cpuSeconds(): number
  /** What wrangler dev printed so far (for failure reports). */
  output(): string
  /** Creates a tenant with one API key through the admin API. */
  newTenant(): Promise<{ tenantId: string; key: string }>
  /** A REST call under /v1 with the key in X-API-Key, as a client would make it. */
  api<T = Record<string, unknown>>(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: T }>
  stop(): Promise<void>
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      const port = typeof addr === 'object' && addr ? addr.port : 0
      srv.close(() => resolve(port))
    })
  })
}

function bin(root: string, name: string): string {
  return join(root, 'node_modules', '.bin', name)
}

/**
 * Node 24 from node_modules first, as npm scripts have it (wrangler needs Node >= 22.12). Wrangler's local explorer
 * and its local trace collector are off unless the caller's environment turns them on: the collector receives every
 * invocation's tail events (each request, each Durable Object call) and writes them to a SQLite file with an fsync,
 * on the same workerd thread as the Worker. That was about 1.7 ms of server CPU per bare GET (3.2 → 1.5 ms) and an
 * fsync per request, a dev-only cost that deployed Workers do not pay (their tracing is opt-in and off the request
 * path) and that no test reads. `X_LOCAL_OBSERVABILITY=true npm run bench` measures with it.
 */
function childEnv(root: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
    WRANGLER_SEND_METRICS: 'false',
    CI: '1',
    X_LOCAL_OBSERVABILITY: process.env.X_LOCAL_OBSERVABILITY ?? 'false',
    X_LOCAL_EXPLORER: process.env.X_LOCAL_EXPLORER ?? 'false',
  }
}

/** Linux clock ticks per second (`getconf CLK_TCK`), the unit of /proc/<pid>/stat times. */
const CLOCK_TICKS_PER_S = 100

/** CPU seconds of a process and all its descendants, from /proc (Linux only; NaN elsewhere). */
export function treeCpuSeconds(root: number): number {
  if (!existsSync('/proc')) return NaN
  const stats = new Map<number, { ppid: number; ticks: number }>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // Fields after the command name (which may hold spaces) start at field 3: state, ppid, …, utime (14), stime (15).
      const raw = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = raw.slice(raw.lastIndexOf(')') + 2).split(' ')
      stats.set(Number(entry), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) })
    } catch {
      // the process ended while we read
    }
  }
  let ticks = 0
  const tree = new Set([root])
  // Parents come before children in pid order only usually, so repeat until nothing is added.
  for (let grew = true; grew; ) {
    grew = false
    for (const [pid, s] of stats) {
      if (!tree.has(pid) && tree.has(s.ppid)) {
        tree.add(pid)
        grew = true
      }
    }
  }
  for (const pid of tree) ticks += stats.get(pid)?.ticks ?? 0
  return ticks / CLOCK_TICKS_PER_S
}

async function waitReady(url: string, child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited early (${child.exitCode}):\n${output()}`)
    try {
      if ((await fetch(`${url}/v1/openapi.json`)).ok) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`wrangler dev did not answer within ${timeoutMs} ms:\n${output()}`)
}

/**
 * The wrangler config `wrangler dev` runs: the checkout's own, or with `assetRouter: false` a copy without its
 * `[assets]` table, written beside it (relative paths in it resolve from its directory) as `.wrangler-bench.toml`.
 * With static assets, miniflare puts Cloudflare's asset router (a JS worker) in front of the Worker on the same
 * workerd thread, and every request crosses it, its body too: about half a millisecond of that thread per inbound
 * push (the inbound bench's notes give the runs).
 * Deployed, Cloudflare routes before the Worker and bills none of it to the Worker (run_worker_first in wrangler.toml
 * sends every path but /docs/* straight to it), so the benchmarks measure the Worker without the router; they
 * request nothing under /docs.
 */
export function wranglerConfig(root: string, assetRouter: boolean): string[] {
  const stripped = assetRouter ? undefined : withoutAssets(readFileSync(join(root, 'wrangler.toml'), 'utf8'))
  if (stripped === undefined) return []
  const path = join(root, '.wrangler-bench.toml')
  writeFileSync(path, stripped)
  return ['--config', path]
}

/** A wrangler.toml's text without its `[assets]` table (up to the next table), or undefined when it has none. */
export function withoutAssets(toml: string): string | undefined {
  const lines = toml.split('\n')
  const start = lines.indexOf('[assets]')
  if (start < 0) return undefined
  const next = lines.findIndex((l, i) => i > start && l.startsWith('['))
  return [...lines.slice(0, start), ...(next < 0 ? [] : lines.slice(next))].join('\n')
}

/**
 * `root`: the checkout whose Worker runs (this one by default); `npm run bench -- --compare <dir>` passes another
 * commit's checkout, with its own node_modules and wrangler.toml, to measure it back to back with this one.
 * `assetRouter`: false runs it without the static-asset router in front (wranglerConfig says why; /docs then has no
 * Scalar bundle); the benchmarks pass false unless BENCH_ASSET_ROUTER=1.
 */
export async function startLocalServer(opts: { vars?: Record<string, string>; root?: string; assetRouter?: boolean } = {}): Promise<LocalServer> {
  const root = opts.root ?? repoRoot
  const dir = mkdtempSync(join(tmpdir(), 'gateway-e2e-'))
  const adminToken = `adm_${randomBytes(16).toString('hex')}`
  const vars: Record<string, string> = {
    ADMIN_TOKEN: adminToken,
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ALLOW_LOOPBACK_URLS: 'true',
    ...opts.vars,
  }
  const envFile = join(dir, 'vars.env')
  writeFileSync(
    envFile,
    Object.entries(vars)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n')
  )
  const persist = join(dir, 'state')

  // The directory and every shard migrated as `npm start` does, copied from the machine's template (migrated-state.ts).
  copyMigratedState(root, persist)

  // freePort closes its probe before wrangler binds, so another server of a parallel test file may take the port in
  // between (seen in CI: "Address already in use"): then wrangler exits, and it is started again on fresh ports.
  let attempt = 0
  const start = async () => {
    const port = await freePort()
    const inspector = await freePort()
    let log = ''
    let directPort: string | undefined
    const child = spawn(
      bin(root, 'wrangler'),
      [
        'dev',
        '--port',
        String(port),
        '--ip',
        '127.0.0.1',
        '--inspector-port',
        String(inspector),
        '--persist-to',
        persist,
        '--env-file',
        envFile,
        '--show-interactive-dev-session=false',
        '--log-level',
        'debug',
        ...wranglerConfig(root, opts.assetRouter ?? true),
      ],
      { cwd: root, env: childEnv(root), stdio: ['ignore', 'pipe', 'pipe'] }
    )
    const collect = (d: Buffer) => {
      const text = d.toString()
      directPort ??= /"userWorkerUrl":\{[^}]*"port":"(\d+)"/.exec(text)?.[1]
      // Debug logging is chatty; keep only the tail for error reports.
      log = (log + text).slice(-64_000)
    }
    child.stdout?.on('data', collect)
    child.stderr?.on('data', collect)
    const url = `http://127.0.0.1:${port}`
    try {
      await waitReady(url, child, () => log, 90_000)
    } catch (err) {
      child.kill('SIGKILL')
      if (++attempt < 3 && child.exitCode !== null && log.includes('Address already in use')) return null
      throw err
    }
    return { inspector, child, url, log: () => log, directPort: () => directPort }
  }
  let started = await start()
  while (!started) started = await start()
  const { inspector, child, url, log } = started
  const directPort = started.directPort() ?? /"userWorkerUrl":\{[^}]*"port":"(\d+)"/.exec(log())?.[1]
  const directUrl = directPort ? `http://127.0.0.1:${directPort}` : url

  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(url + path, {
      method,
      headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
    return (await res.json()) as { id: string; key: string }
  }

  return {
    url,
    directUrl,
    adminToken,
    inspectorPort: inspector,
    stateDir: persist,
    output: log,
    async api<T>(key: string, method: string, path: string, body?: unknown) {
      const res = await fetch(`${url}/v1${path}`, {
        method,
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      return { status: res.status, json: (await res.json()) as T }
    },
    cpuSeconds: () => treeCpuSeconds(child.pid!),
    async newTenant() {
      const tenant = await admin('POST', '/admin/tenants', {})
      const key = await admin('POST', `/admin/tenants/${tenant.id}/keys`)
      return { tenantId: tenant.id, key: key.key }
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()))
        child.kill('SIGTERM')
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))])
        if (child.exitCode === null) child.kill('SIGKILL')
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
