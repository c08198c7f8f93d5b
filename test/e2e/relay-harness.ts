/**
 * E2E helpers for the relay: real relay processes (`tsx relay/main.ts`, as `npm run relay` runs it) against the
 * real local server, with the simulated network in the test process so a relay can be SIGKILLed while the
 * "upstream" keeps its phones and backlog. Events are checked as webhook deliveries (webhook-inbox.ts); the local
 * D1 file is opened read-only by the relay benchmark, which counts stored rows without the API in the way. No vitest
 * here (the benchmarks import it): the per-file set-up is relay-suite.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { startSimNetwork, type SimServer } from '../../relay/sim/network/server'
import { repoRoot, type LocalServer } from './local-server'

export type RelayProc = {
  proc: ChildProcess
  instance: Promise<string>
  /** Resolves when the relay's link to the gateway is open. */
  linked: Promise<void>
  healthUrl: Promise<string>
  output(): string
  kill(signal: NodeJS.Signals): Promise<number | null>
}

export async function issueRelayToken(server: LocalServer, tenantId?: string): Promise<{ id: string; token: string }> {
  const res = await fetch(`${server.url}/admin/relays`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(tenantId ? { tenant_id: tenantId } : {}),
  })
  if (res.status !== 201) throw new Error(`issue relay token: ${res.status} ${await res.text()}`)
  return (await res.json()) as { id: string; token: string }
}

export function startSim(): Promise<SimServer> {
  // Real QR timing would make a link-expiry scenario take minutes; the rest of the network behaves as in production.
  return startSimNetwork({ timing: { firstQrMs: 20_000, nextQrMs: 10_000, qrRefs: 3 } })
}

export const SESSION_KEY = randomBytes(32).toString('base64')

/** How long a relay may take to start and link; generous because e2e files share a 2-core machine with other suites. */
const RELAY_START_MS = 60_000

/**
 * The relay's young generation is capped as in production (relay/Dockerfile, issue 23 §5); given through
 * NODE_OPTIONS ahead of the caller's, so a benchmark can compare another size (the last value wins).
 */
const RELAY_NODE_OPTIONS = '--max-semi-space-size=16'

export function spawnRelay(server: LocalServer, token: string, sim: SimServer, env: Record<string, string> = {}): RelayProc {
  // node with tsx as a loader, not the tsx CLI: the CLI runs the relay in a child process that a SIGKILL of the
  // CLI would leave running.
  const proc = spawn(join(repoRoot, 'node_modules/.bin/node'), ['--import', 'tsx', 'relay/main.ts'], {
    cwd: repoRoot,
    env: {
      ...process.env,
      PATH: `${join(repoRoot, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
      GATEWAY_URL: server.url,
      RELAY_TOKEN: token,
      RELAY_SESSION_KEY: SESSION_KEY,
      RELAY_DRIVER: 'sim',
      RELAY_SIM_URL: sim.url,
      RELAY_HEALTH_PORT: '0',
      RELAY_DRAIN_TIMEOUT_MS: '5000',
      LOG_LEVEL: 'info',
      ...env,
      NODE_OPTIONS: [process.env.NODE_OPTIONS ?? '', RELAY_NODE_OPTIONS, env.NODE_OPTIONS ?? ''].filter(Boolean).join(' '),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  const lines: Array<(line: Record<string, unknown>) => void> = []
  const onLine = (raw: string) => {
    let json: unknown
    try {
      json = JSON.parse(raw)
    } catch {
      return
    }
    if (typeof json === 'object' && json !== null) for (const l of lines) l(json as Record<string, unknown>)
  }
  let partial = ''
  proc.stdout?.on('data', (d: Buffer) => {
    out += d.toString()
    partial += d.toString()
    const parts = partial.split('\n')
    partial = parts.pop() ?? ''
    for (const p of parts) onLine(p)
  })
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()))
  const when = <T>(pick: (line: Record<string, unknown>) => T | undefined, what: string) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`relay: no "${what}" within ${RELAY_START_MS / 1000} s:\n${out.slice(-3000)}`)), RELAY_START_MS)
      lines.push((l) => {
        const v = pick(l)
        if (v !== undefined) clearTimeout(timer), resolve(v)
      })
      proc.once('exit', (code) => reject(new Error(`relay exited (${code}) before "${what}":\n${out.slice(-3000)}`)))
    })
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)))
  const relay: RelayProc = {
    proc,
    instance: when((l) => (l.msg === 'relay started' && typeof l.instance === 'string' ? l.instance : undefined), 'relay started'),
    healthUrl: when((l) => (l.msg === 'relay started' && typeof l.health === 'string' ? l.health : undefined), 'relay started'),
    linked: when((l) => (l.msg === 'relay link open' ? true : undefined), 'relay link open').then(() => undefined),
    output: () => out,
    async kill(signal) {
      if (proc.exitCode !== null) return proc.exitCode
      proc.kill(signal)
      return exited
    },
  }
  // Unobserved rejections of these promises must not fail the run: tests await what they need.
  for (const p of [relay.instance, relay.healthUrl, relay.linked]) p.catch(() => undefined)
  return relay
}

/** The local D1 database file of a running `wrangler dev`, read-only. */
export function openLocalD1(server: LocalServer): DatabaseSync {
  const dir = join(server.stateDir, 'v3', 'd1', 'miniflare-D1DatabaseObject')
  const file = readdirSync(dir).find((f) => f.endsWith('.sqlite') && f !== 'metadata.sqlite')
  if (!file) throw new Error(`no D1 database under ${dir}`)
  return new DatabaseSync(join(dir, file), { readOnly: true })
}

/** The contacts the gateway stored for an account (read from the local D1 file): who it may message by phone. */
export function storedContacts(server: LocalServer, accountId: string): Array<{ phone: string | null; name: string | null; peer_id: string | null }> {
  const db = openLocalD1(server)
  try {
    return db.prepare('SELECT phone, name, peer_id FROM contacts WHERE account_id = ? ORDER BY created_at').all(accountId) as Array<{
      phone: string | null
      name: string | null
      peer_id: string | null
    }>
  } finally {
    db.close()
  }
}

/** Polls until `check` answers something truthy, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 10_000,
  what = 'condition'
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  while (Date.now() < deadline) {
    try {
      const v = await check()
      if (v) return v
      last = v
    } catch (err) {
      last = err
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`${what} not reached within ${timeoutMs} ms (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`)
}

export async function simPost(sim: SimServer, path: string, body: unknown = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${sim.url}/sim${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

export async function simGet<T = Record<string, unknown>>(sim: SimServer, path: string): Promise<T> {
  return (await (await fetch(`${sim.url}/sim${path}`)).json()) as T
}

/** A parsed JSON answer as the tests read it (fields are checked with expect, not trusted). */
export type Json = Record<string, any>
export type Api = (key: string, method: string, path: string, body?: unknown) => Promise<{ status: number; json: Json }>

export const enc = encodeURIComponent

const phoneSeqs = new Map<string, number>()
/**
 * A fresh E.164 number under `prefix` (country code and area, e.g. `1556`): 7 more digits counting up from a start
 * taken from the clock, so numbers differ within a file and between runs against a reused sim.
 */
export function newPhone(prefix: string): string {
  const n = phoneSeqs.get(prefix) ?? (Date.now() % 900_000) * 10
  phoneSeqs.set(prefix, n + 1)
  return `+${prefix}${String(n % 10_000_000).padStart(7, '0')}`
}

/** A REST call under /v1 with the key in X-API-Key. */
export function apiOf(server: LocalServer): Api {
  return async (key, method, path, body) => {
    const res = await fetch(`${server.url}/v1${path}`, {
      method,
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: res.status, json: (await res.json()) as Json }
  }
}

/**
 * Links an alpha number the way a user does: connect, wait for the relay's QR, scan it on the simulated phone, then
 * wait until both the connection status and `GET /accounts` say connected.
 */
export async function linkAlpha(server: LocalServer, sim: SimServer, key: string, phone: string): Promise<{ started: Json; qr: Json }> {
  const api = apiOf(server)
  const started = await api(key, 'POST', '/channels/alpha-web/connections', { phone_number: phone })
  if (started.status !== 200) throw new Error(`connect ${phone}: ${started.status} ${JSON.stringify(started.json)}`)
  const qr = await eventually(
    async () => {
      const r = await api(key, 'GET', `/channels/alpha-web/connections/${enc(phone)}/qr`)
      return r.json.qr_code ? r.json : undefined
    },
    10_000,
    'a QR code'
  )
  await simPost(sim, `/alpha/${enc(phone)}/link`)
  await eventually(async () => (await api(key, 'GET', `/channels/alpha-web/connections/${enc(phone)}/status`)).json.status === 'connected', 10_000, 'connected')
  await eventually(
    async () => (await api(key, 'GET', '/accounts')).json.accounts.find((a: Json) => a.id === phone)?.status === 'connected',
    10_000,
    'account connected'
  )
  return { started: started.json, qr }
}

/** Every inbound text of the key's tenant, newest first, across all pages of `GET /messages`. */
export async function inboundTexts(api: Api, key: string): Promise<string[]> {
  const texts: string[] = []
  let before: string | null = null
  do {
    const page: { json: Json } = await api(key, 'GET', `/messages?direction=inbound&limit=100${before ? `&before=${before}` : ''}`)
    texts.push(...page.json.messages.map((m: Json) => m.text))
    before = page.json.next_cursor
  } while (before)
  return texts
}
