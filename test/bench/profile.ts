/**
 * CPU profiles of the Worker's isolate (the Worker and its Durable Objects share it under wrangler dev), taken through
 * wrangler dev's inspector port with the DevTools Profiler domain, and summed per function: self time (samples whose
 * top frame is the function) and inclusive time (samples with the function anywhere on the stack, counted once per
 * sample). `npm run bench -- inbound --profile` profiles every selected benchmark and prints the tables; the raw
 * `.cpuprofile` is written next to them for Chrome DevTools or speedscope.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import WebSocket from 'ws'

type CallFrame = { functionName: string; url: string; lineNumber: number; columnNumber: number }
type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] }
export type CpuProfile = { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] }

export type FunctionCost = { name: string; where: string; selfMs: number; inclusiveMs: number }
export type ProfileSummary = {
  totalMs: number
  /** Samples where the isolate ran nothing ("(idle)"). */
  idleMs: number
  functions: FunctionCost[]
  /** Self time per source module (worker file or npm package), from the bundle's module comments. */
  modules: Array<{ module: string; selfMs: number }>
}

/** A connection to the isolate's inspector; one DevTools client at a time may hold it. */
class Inspector {
  private nextId = 1
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (raw: Buffer) => {
      const msg = JSON.parse(raw.toString('utf8')) as { id?: number; result?: unknown; error?: { message: string } }
      const waiter = msg.id === undefined ? undefined : this.pending.get(msg.id)
      if (!waiter || msg.id === undefined) return
      this.pending.delete(msg.id)
      if (msg.error) waiter.reject(new Error(msg.error.message))
      else waiter.resolve(msg.result)
    })
  }

  /** `target`: wrangler dev's inspector port, or a DevTools WebSocket URL (a Node process under `--inspect`). */
  static async open(target: number | string): Promise<Inspector> {
    // The inspector proxy admits local origins only; `ws` sends no User-Agent, so it takes this one.
    const url = typeof target === 'number' ? `ws://127.0.0.1:${target}/ws` : target
    const socket = new WebSocket(url, { origin: 'http://localhost', maxPayload: 1024 ** 3 })
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve())
      socket.once('error', reject)
    })
    return new Inspector(socket)
  }

  send(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.socket.send(JSON.stringify({ id, method, params }))
    })
  }

  close(): void {
    this.socket.close()
  }
}

export type RunningProfile = { stop(): Promise<CpuProfile> }

/** Starts sampling the isolate (or Node process) every `intervalUs` microseconds; `stop()` answers the profile. */
export async function startProfile(inspector: number | string, intervalUs = 250): Promise<RunningProfile> {
  const session = await Inspector.open(inspector)
  await session.send('Profiler.enable')
  await session.send('Profiler.setSamplingInterval', { interval: intervalUs })
  await session.send('Profiler.start')
  return {
    async stop() {
      try {
        const result = (await session.send('Profiler.stop')) as { profile: CpuProfile }
        await session.send('Profiler.disable')
        return result.profile
      } finally {
        session.close()
      }
    },
  }
}

type SamplingNode = { callFrame: CallFrame; selfSize: number; children: SamplingNode[] }
export type AllocationSite = { name: string; where: string; selfBytes: number; inclusiveBytes: number }

/**
 * Samples allocations (the inspector's HeapProfiler sampling: one sample per `intervalBytes` allocated, garbage
 * included) until `stop()`, which answers the bytes allocated per function, most first. Where a process's garbage
 * comes from, which its live heap does not show.
 */
export async function startAllocationSampling(
  inspector: number | string,
  rawPath: string | null = null,
  intervalBytes = 32 * 1024
): Promise<{ stop(): Promise<AllocationSite[]> }> {
  const session = await Inspector.open(inspector)
  await session.send('HeapProfiler.enable')
  await session.send('HeapProfiler.startSampling', {
    samplingInterval: intervalBytes,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  })
  return {
    async stop() {
      try {
        const { profile } = (await session.send('HeapProfiler.stopSampling')) as { profile: { head: SamplingNode } }
        if (rawPath) writeFileSync(rawPath, JSON.stringify(profile))
        const byFn = new Map<string, AllocationSite>()
        const walk = (n: SamplingNode, stack: string[]) => {
          const f = n.callFrame
          const key = `${f.functionName || '(anonymous)'} ${f.url}:${f.lineNumber + 1}`
          const cost = byFn.get(key) ?? { name: f.functionName || '(anonymous)', where: `${f.url}:${f.lineNumber + 1}`, selfBytes: 0, inclusiveBytes: 0 }
          byFn.set(key, cost)
          cost.selfBytes += n.selfSize
          const total = (m: SamplingNode): number => m.selfSize + m.children.reduce((a, c) => a + total(c), 0)
          if (!stack.includes(key)) cost.inclusiveBytes += total(n)
          for (const c of n.children) walk(c, [...stack, key])
        }
        walk(profile.head, [])
        return [...byFn.values()].sort((a, b) => b.selfBytes - a.selfBytes)
      } finally {
        await session.send('HeapProfiler.disable').catch(() => undefined)
        session.close()
      }
    },
  }
}

/**
 * Forces a full garbage collection in a Node process under `--inspect` (DevTools `HeapProfiler.collectGarbage`, the
 * button in Chrome's memory panel), `times` over (finalizers run by the first free more for the next), then waits
 * `settleMs` for the background sweeper and the allocator to hand freed pages back before anyone reads RSS. A memory
 * reading taken after this counts what is live, not whatever the last GC happened to leave behind.
 */
export async function collectGarbage(inspector: string, times = 2, settleMs = 1000): Promise<void> {
  const session = await Inspector.open(inspector)
  try {
    for (let i = 0; i < times; i++) await session.send('HeapProfiler.collectGarbage')
  } finally {
    session.close()
  }
  await new Promise((r) => setTimeout(r, settleMs))
}

/**
 * Which module a bundle line belongs to: esbuild (wrangler's bundler) opens every module with a `// path` comment,
 * so the nearest one above the line names it (`worker/db/events.ts`, `node_modules/drizzle-orm/...`).
 */
function moduleLocator(bundle: string | undefined): (url: string, line: number) => string {
  const marks: Array<{ line: number; module: string }> = []
  if (bundle) {
    readFileSync(bundle, 'utf8')
      .split('\n')
      .forEach((text, i) => {
        const m = /^\/\/ (\S+\.(?:ts|js|mjs|cjs|json))$/.exec(text)
        if (m) marks.push({ line: i, module: m[1]! })
      })
  }
  return (url, line) => {
    // The Worker's own bundle is `index.js`; anything else is the runtime (`cloudflare-internal:d1-api`, …).
    if (url !== 'index.js') return url || '(native)'
    let lo = 0
    let hi = marks.length - 1
    let found = url
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if (marks[mid]!.line <= line) {
        found = marks[mid]!.module
        lo = mid + 1
      } else hi = mid - 1
    }
    return found
  }
}

/** `node_modules/drizzle-orm/sqlite-core/...` → `drizzle-orm`; worker files keep their path. */
function packageOf(module: string): string {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(module)
  return m ? m[1]! : module
}

/**
 * The bundle wrangler dev is serving (`.wrangler/tmp/dev-*\/index.js`, the newest), to name the module of each
 * function. It is deleted when the server stops, so read it before.
 */
export function devBundle(repoRoot: string): string | undefined {
  const tmp = join(repoRoot, '.wrangler', 'tmp')
  if (!existsSync(tmp)) return undefined
  const bundles = readdirSync(tmp)
    .filter((d) => d.startsWith('dev-'))
    .map((d) => join(tmp, d, 'index.js'))
    .filter((f) => existsSync(f))
  return bundles.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]
}

export function summarize(profile: CpuProfile, bundle?: string): ProfileSummary {
  const locate = moduleLocator(bundle)
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const keyOf = new Map<number, { key: string; name: string; where: string; module: string }>()
  for (const n of profile.nodes) {
    const f = n.callFrame
    const module = locate(f.url, f.lineNumber)
    const name = f.functionName || (f.url ? '(anonymous)' : '(root)')
    const where = f.url ? `${module}:${f.lineNumber + 1}` : ''
    keyOf.set(n.id, { key: `${name}@${f.url}:${f.lineNumber}:${f.columnNumber}`, name, where, module })
  }
  const fns = new Map<string, FunctionCost>()
  const modules = new Map<string, number>()
  let totalMs = 0
  let idleMs = 0
  profile.samples.forEach((id, i) => {
    // timeDeltas[i] is the time before sample i; the sample stands for the interval up to the next one.
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000
    totalMs += ms
    const top = keyOf.get(id)!
    if (top.name === '(idle)') idleMs += ms
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const k = keyOf.get(at)!
      if (seen.has(k.key)) continue
      seen.add(k.key)
      const cost = fns.get(k.key) ?? { name: k.name, where: k.where, selfMs: 0, inclusiveMs: 0 }
      fns.set(k.key, cost)
      cost.inclusiveMs += ms
      if (at === id) cost.selfMs += ms
    }
    const mod = byId.get(id)!.callFrame.url ? packageOf(top.module) : top.name
    modules.set(mod, (modules.get(mod) ?? 0) + ms)
  })
  return {
    totalMs,
    idleMs,
    functions: [...fns.values()],
    modules: [...modules.entries()].map(([module, selfMs]) => ({ module, selfMs })).sort((a, b) => b.selfMs - a.selfMs),
  }
}

export function formatSummary(s: ProfileSummary, top = 25): string {
  const pct = (v: number) => `${((100 * v) / s.totalMs).toFixed(1).padStart(5)} %`
  const row = (f: FunctionCost) => `${pct(f.selfMs)}  ${pct(f.inclusiveMs)}  ${f.name}  ${f.where}`
  const skip = new Set(['(root)', '(program)', '(idle)'])
  const real = s.functions.filter((f) => !skip.has(f.name))
  return [
    `isolate CPU profile: ${(s.totalMs / 1000).toFixed(1)} s sampled, ${pct(s.idleMs).trim()} idle`,
    '',
    `top ${top} by self time (self, inclusive, function, bundle module:line)`,
    ...[...s.functions]
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, top)
      .map(row),
    '',
    `top ${top} by inclusive time`,
    ...[...real]
      .sort((a, b) => b.inclusiveMs - a.inclusiveMs)
      .slice(0, top)
      .map(row),
    '',
    'self time per module or package',
    ...s.modules.slice(0, top).map((m) => `${pct(m.selfMs)}  ${m.module}`),
  ].join('\n')
}

/** Profiles `work` and writes the raw profile to `rawPath` (open it in Chrome DevTools or speedscope). */
export async function profiled<T>(
  inspector: number | string,
  rawPath: string,
  bundle: string | undefined,
  work: () => Promise<T>
): Promise<{ result: T; summary: ProfileSummary }> {
  const running = await startProfile(inspector)
  let result: T
  try {
    result = await work()
  } catch (err) {
    await running.stop().catch(() => undefined)
    throw err
  }
  const profile = await running.stop()
  writeFileSync(rawPath, JSON.stringify(profile))
  return { result, summary: summarize(profile, bundle) }
}
