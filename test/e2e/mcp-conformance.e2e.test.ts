/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against the real local server: its server
 * scenarios server-initialize, ping, tools-list and dns-rebinding-protection each pass (issue 14 §5). The suite sends
 * no API key, so a small proxy in front adds `Authorization: Bearer <key>` and forwards everything else untouched
 * (Host and Origin included, which the DNS-rebinding scenario varies). Results go to a temporary directory.
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

async function checksUnder(dir: string): Promise<Check[]> {
  const checks: Check[] = []
  for (const entry of await readdir(dir, { recursive: true })) {
    if (entry.endsWith('checks.json')) checks.push(...(JSON.parse(await readFile(join(dir, entry), 'utf8')) as Check[]))
  }
  return checks
}

/** Runs one scenario; exit code 0 means every check passed. Answers the code and the checks it wrote. */
const outputs: string[] = []

async function scenario(url: string, name: string): Promise<{ code: number; checks: Check[]; output: string }> {
  const out = await mkdtemp(join(tmpdir(), `mcp-conformance-${name}-`))
  outputs.push(out)
  const args = [CLI, 'server', '--url', `${url}/mcp`, '--scenario', name, '--output-dir', out]
  const result = await run(process.execPath, args, { cwd: out, timeout: 120_000 }).then(
    (r) => ({ code: 0, output: r.stdout + r.stderr }),
    (err: { code?: number; stdout?: string; stderr?: string }) => ({
      code: typeof err.code === 'number' ? err.code : 1,
      output: `${err.stdout ?? ''}${err.stderr ?? ''}`,
    })
  )
  return { ...result, checks: await checksUnder(out) }
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

describe('MCP conformance suite, server scenarios', () => {
  for (const name of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']) {
    it(`passes ${name}`, async () => {
      const { code, checks, output } = await scenario(shim.url, name)
      const failed = checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO')
      expect(failed, output).toEqual([])
      expect(checks.length, output).toBeGreaterThan(0)
      expect(code, output).toBe(0)
    })
  }
})
