/** What every benchmark gets and returns, plus small statistics helpers. */
import type { Receiver } from '../fixtures/receiver'
import type { LocalServer } from '../e2e/local-server'

export type Baseline = { usageP50Ms: number; usageP99Ms: number; samples: number }

export type BenchContext = {
  server: LocalServer
  receiver: Receiver
  /** The round trip of a bare authenticated GET /v1/usage, measured in the same run. */
  baseline: Baseline
}

export type BenchRow = { metric: string; value: string; target?: string; ok?: boolean }
export type BenchReport = { title: string; rows: BenchRow[]; notes?: string[] }
export type Bench = { name: string; run(ctx: BenchContext): Promise<BenchReport> }

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

export const ms = (v: number) => `${v.toFixed(2)} ms`

export async function api(server: LocalServer, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${server.url}/v1${path}`, {
    method,
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, json: await res.json() }
}

/** p50/p99 of a bare authenticated GET /v1/usage: the yardstick every latency figure is compared with. */
export async function measureBaseline(server: LocalServer, samples = 300): Promise<Baseline> {
  const { key } = await server.newTenant()
  for (let i = 0; i < 20; i++) await api(server, key, 'GET', '/usage')
  const times: number[] = []
  for (let i = 0; i < samples; i++) {
    const t = performance.now()
    const r = await api(server, key, 'GET', '/usage')
    times.push(performance.now() - t)
    if (r.status !== 200) throw new Error(`baseline GET /usage answered ${r.status}`)
  }
  return { usageP50Ms: percentile(times, 50), usageP99Ms: percentile(times, 99), samples }
}
