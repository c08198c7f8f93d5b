/**
 * The OpenAPI document as client generators read it: Redocly's recommended ruleset (the `@redocly/cli` package)
 * finds no error and no warning in what the local server serves, and every operation has an operationId, the MCP
 * tool's name where a tool runs it. The typed client's copy (client/openapi.json, built in Node by
 * scripts/generate-client.mjs) is the document the server serves.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { repoRoot } from './local-server'
import { localSuite } from './local-suite'

const local = localSuite()
const run = promisify(execFile)

type Problem = { ruleId: string; severity: 'error' | 'warn'; message: string; location: { pointer: string }[] }

async function document(): Promise<Record<string, unknown> & { paths: Record<string, Record<string, { operationId?: string }>> }> {
  const res = await fetch(`${local.server.directUrl}/v1/openapi.json`)
  expect(res.status).toBe(200)
  return res.json()
}

describe('GET /v1/openapi.json', () => {
  it('passes Redocly’s recommended lint with no error and no warning', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'openapi-'))
    const file = join(dir, 'openapi.json')
    await writeFile(file, JSON.stringify(await document()))
    const cli = join(repoRoot, 'node_modules/@redocly/cli/bin/cli.js')
    // Exit code 1 means problems were found; the JSON report says which, so read it either way.
    const out = await run(process.execPath, [cli, 'lint', file, '--extends=recommended', '--format=json'], { cwd: dir }).catch((err: { stdout?: string }) => ({
      stdout: err.stdout ?? '',
    }))
    const report = JSON.parse(out.stdout) as { problems: Problem[] }
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`)
    expect(problems).toEqual([])
  })

  it('gives every operation a unique operationId, the MCP tool name where one maps to it', async () => {
    const doc = await document()
    const ids: string[] = []
    for (const item of Object.values(doc.paths)) for (const op of Object.values(item)) ids.push(op.operationId ?? '')
    expect(ids.filter((id) => !/^[a-z][a-z0-9_]*$/.test(id))).toEqual([])
    expect(new Set(ids).size).toBe(ids.length)
    expect(doc.paths['/messages']?.post?.operationId).toBe('send_message')
    expect(doc.paths['/messages/wait']?.get?.operationId).toBe('wait_for_messages')
    expect(doc.paths['/webhooks/{webhookId}/test']?.post?.operationId).toBe('test_webhook')
    expect(doc.paths['/channels/alpha-web/connections']?.post?.operationId).toBe('connect_alpha')
  })

  it('is the document the typed client was generated from (client/openapi.json, but for the origin)', async () => {
    const served = JSON.stringify(await document())
    const committed = JSON.parse(await readFile(join(repoRoot, 'client/openapi.json'), 'utf8'))
    const origin = new URL(local.server.directUrl).origin
    expect(JSON.parse(served.replaceAll(origin, 'http://127.0.0.1:8787'))).toEqual(committed)
  })
})
