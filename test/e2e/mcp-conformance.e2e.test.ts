/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against the real local server: every
 * server scenario it has, run at 2026-07-28, at 2025-06-18 and at each scenario's default revision (2025-11-25 for
 * the 2025-era ones; the extension scenarios run there too), with mcp-conformance-baseline.yml naming the scenarios (or single checks) that do not apply
 * and why. The CLI fails on a failure the baseline does not name and on a baseline entry that passes. The suite
 * sends no API key, so a small proxy in front adds `Authorization: Bearer <key>` and forwards everything else
 * untouched (Host and Origin included, which the DNS-rebinding scenario varies). Results go to a temporary directory.
 */
import { execFile } from 'node:child_process'
import { createServer, request, type Server } from 'node:http'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { repoRoot } from './local-server'
import { localSuite } from './local-suite'

const local = localSuite()
const run = promisify(execFile)
const CLI = join(repoRoot, 'node_modules/@modelcontextprotocol/conformance/dist/index.js')
const BASELINE = join(import.meta.dirname, 'mcp-conformance-baseline.yml')

/** Forwards every request to `target` with the API key added; nothing else changes, the Host header included. */
function keyShim(target: URL, key: string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${key}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      }
    )
    upstream.on('error', () => res.writeHead(502).end())
    req.pipe(upstream)
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server }))
  )
}

type Check = { id: string; status: string; errorMessage?: string }

/** Each scenario the run wrote results for, with its checks. */
async function scenariosUnder(dir: string): Promise<Map<string, Check[]>> {
  const found = new Map<string, Check[]>()
  for (const entry of await readdir(dir)) {
    const name = entry.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '')
    const checks = JSON.parse(await readFile(join(dir, entry, 'checks.json'), 'utf8')) as Check[]
    found.set(name, checks)
  }
  return found
}

const outputs: string[] = []

/** Runs the whole server suite once (`args` picks the revision); exit code 0 means only baselined failures. */
async function suite(url: string, args: string[]): Promise<{ code: number; scenarios: Map<string, Check[]>; output: string }> {
  const out = await mkdtemp(join(tmpdir(), 'mcp-conformance-'))
  outputs.push(out)
  const argv = [CLI, 'server', '--url', `${url}/mcp`, '--suite', 'all', ...args, '--expected-failures', BASELINE, '--output-dir', out]
  const result = await run(process.execPath, argv, { cwd: out, timeout: 300_000 }).then(
    (r) => ({ code: 0, output: r.stdout + r.stderr }),
    (err: { code?: number; stdout?: string; stderr?: string }) => ({
      code: typeof err.code === 'number' ? err.code : 1,
      output: `${err.stdout ?? ''}${err.stderr ?? ''}`,
    })
  )
  return { ...result, scenarios: await scenariosUnder(out) }
}

let shim: { url: string; server: Server }

beforeAll(async () => {
  const { key } = await local.server.newTenant()
  shim = await keyShim(new URL(local.server.url), key)
})

afterAll(async () => {
  if (shim) await new Promise((resolve) => shim.server.close(resolve))
  await Promise.all(outputs.map((dir) => rm(dir, { recursive: true, force: true })))
})

const passed = (checks: Check[] | undefined) => !!checks?.length && checks.every((c) => c.status !== 'FAILURE')

describe('MCP conformance suite, every server scenario', () => {
  it('passes every scenario written for 2026-07-28, apart from the baseline', async () => {
    const { code, scenarios, output } = await suite(shim.url, ['--spec-version', '2026-07-28'])
    expect(code, output).toBe(0)
    for (const name of [
      'tools-list',
      'http-header-validation',
      'dns-rebinding-protection',
      'server-sse-multiple-streams',
      'input-required-result-validate-input',
    ]) {
      expect(passed(scenarios.get(name)), `${name}: ${output}`).toBe(true)
    }
    // Of server-stateless (no initialize; server/discover, per-request _meta, the revision's errors), only the four
    // checks that need the reference server's diagnostic tools may fail.
    const stateless = scenarios.get('server-stateless') ?? []
    expect(stateless.filter((c) => c.status === 'SUCCESS').length, output).toBeGreaterThan(20)
    expect(scenarios.has('caching')).toBe(true)
  })

  it('passes every scenario at its default revision (the 2025-11-25 ones, the extension ones), apart from the baseline', async () => {
    const { code, scenarios, output } = await suite(shim.url, [])
    expect(code, output).toBe(0)
    for (const name of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'])
      expect(passed(scenarios.get(name)), `${name}: ${output}`).toBe(true)
    for (const extension of ['tasks-lifecycle', 'sep-2640-skills-enumeration']) expect(scenarios.has(extension), `${extension} ran`).toBe(true)
  })

  it('passes every scenario written for 2025-06-18, apart from the baseline', async () => {
    const { code, scenarios, output } = await suite(shim.url, ['--spec-version', '2025-06-18'])
    expect(code, output).toBe(0)
    for (const name of ['server-initialize', 'ping', 'tools-list']) expect(passed(scenarios.get(name)), `${name}: ${output}`).toBe(true)
  })
})
