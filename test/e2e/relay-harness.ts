/**
 * E2E helpers for the relay: real relay processes (`tsx relay/main.ts`, as `npm run relay` runs it) against the
 * real local server, with the simulated network in the test process so a relay can be SIGKILLed while the
 * "upstream" keeps its phones and backlog. Events are checked as webhook deliveries (webhook-inbox.ts); the local
 * D1 file is opened read-only by the relay benchmark, which counts stored rows without the API in the way.
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
      const timer = setTimeout(() => reject(new Error(`relay: no "${what}" within 30 s:\n${out.slice(-3000)}`)), 30_000)
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
