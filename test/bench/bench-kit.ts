/** What every benchmark gets and returns, plus small statistics helpers and a lightweight HTTP client. */
import http from 'node:http'
import type { Receiver } from '../fixtures/receiver'
import type { LocalServer } from '../e2e/local-server'

export type Baseline = {
  usageP50Ms: number
  usageP99Ms: number
  samples: number
  /** The same call through wrangler dev's reload proxy (what `npm start` users hit), for reference. */
  proxiedUsageP50Ms: number
  /** Server CPU (wrangler dev's process tree) per bare GET /v1/usage: the yardstick for CPU figures. */
  usageCpuMs: number
}

export type BenchContext = {
  server: LocalServer
  receiver: Receiver
  /** The round trip of a bare authenticated GET /v1/usage, measured in the same run. */
  baseline: Baseline
}

/**
 * One figure. `ratio` compares it with the same run's baseline named by `base` (the bare GET's round trip p50, or
 * its server CPU per call); the runner prints that baseline, the ratio, the target and met/not met beside it.
 */
export type BenchRow = { metric: string; value: string; target?: string; ok?: boolean; ratio?: number; base?: 'round trip' | 'cpu' }
export type BenchReport = { title: string; rows: BenchRow[]; notes?: string[] }
export type Bench = { name: string; run(ctx: BenchContext): Promise<BenchReport> }
/** A benchmark that needs no local server (it runs its own harness, e.g. workerd on an injected clock). */
export type StandaloneBench = { name: string; standalone: true; run(): Promise<BenchReport> }

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

/**
 * The middle item of an odd number of runs by `key` (the upper middle of an even number): a run, not a number, so a
 * figure and its companions (the same run's CPU) come from one run.
 */
export function medianBy<T>(items: T[], key: (item: T) => number): T {
  const sorted = [...items].sort((a, b) => key(a) - key(b))
  const middle = sorted[Math.floor(sorted.length / 2)]
  if (middle === undefined) throw new Error('medianBy: no runs')
  return middle
}

export const ms = (v: number) => `${v.toFixed(2)} ms`

// node:http with keep-alive rather than fetch: on a 2-core machine the client must not eat the server's CPU.
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })

/** Calls the gateway (past wrangler dev's proxy unless `viaProxy`). */
export function api(server: LocalServer, key: string, method: string, path: string, body?: unknown, viaProxy = false): Promise<{ status: number; json: any }> {
  return request(`${viaProxy ? server.url : server.directUrl}/v1${path}`, method, { 'X-API-Key': key }, body)
}

/**
 * One JSON request over the shared keep-alive agent. Every figure that is compared with another goes through this,
 * so a ratio measures the server, not two different HTTP clients.
 */
export function request(target: string, method: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; json: any }> {
  const url = new URL(target)
  const payload = body === undefined ? undefined : JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        agent,
        headers: { ...headers, ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          try {
            resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : null })
          } catch (err) {
            reject(new Error(`${method} ${url.pathname} answered ${res.statusCode} with non-JSON: ${text.slice(0, 200)} (${String(err)})`))
          }
        })
        res.on('error', reject)
      }
    )
    req.on('error', reject)
    req.end(payload)
  })
}

/** p50/p99 of a bare authenticated GET /v1/usage: the yardstick every latency figure is compared with. */
export async function measureBaseline(server: LocalServer, samples = 1000): Promise<Baseline> {
  const { key } = await server.newTenant()
  // Warm: V8 optimises the request path after some hundreds of calls, and a colder start made back-to-back runs of the
  // same commit differ by a third in CPU per call.
  for (let i = 0; i < 300; i++) await api(server, key, 'GET', '/usage')
  const times: number[] = []
  const cpuBefore = server.cpuSeconds()
  for (let i = 0; i < samples; i++) {
    const t = performance.now()
    const r = await api(server, key, 'GET', '/usage')
    times.push(performance.now() - t)
    if (r.status !== 200) throw new Error(`baseline GET /usage answered ${r.status}`)
  }
  const usageCpuMs = ((server.cpuSeconds() - cpuBefore) * 1000) / samples
  const proxied: number[] = []
  for (let i = 0; i < samples / 3; i++) {
    const t = performance.now()
    await api(server, key, 'GET', '/usage', undefined, true)
    proxied.push(performance.now() - t)
  }
  return { usageP50Ms: percentile(times, 50), usageP99Ms: percentile(times, 99), samples, proxiedUsageP50Ms: percentile(proxied, 50), usageCpuMs }
}
