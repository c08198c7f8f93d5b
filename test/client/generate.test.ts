/**
 * The typed client cannot rot: its generated files are what `npm run client:generate` makes from the routes today
 * (regenerated into a temporary folder and compared), and the package builds to ES modules that a Node program
 * imports through its `exports` and uses.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '../..')
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('client/', () => {
  it('holds the OpenAPI document and types the routes generate now (run npm run client:generate after changing a route)', () => {
    const out = mkdtempSync(join(tmpdir(), 'client-gen-'))
    dirs.push(out)
    execFileSync(process.execPath, [join(root, 'scripts/generate-client.mjs'), out], { cwd: root, stdio: 'pipe' })
    for (const file of ['openapi.json', 'src/openapi.ts']) {
      expect(readFileSync(join(root, 'client', file), 'utf8'), `client/${file} is stale: npm run client:generate`).toBe(readFileSync(join(out, file), 'utf8'))
    }
  }, 120_000)

  it('builds to ES modules with declarations that a Node program imports and uses', async () => {
    // Inside the repository, so the built files resolve openapi-fetch from node_modules as an installed package would.
    const out = mkdtempSync(join(root, 'node_modules/.client-build-'))
    dirs.push(out)
    execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'client/tsconfig.build.json'), '--outDir', out], {
      stdio: 'pipe',
    })
    const pkg = JSON.parse(readFileSync(join(root, 'client/package.json'), 'utf8')) as { exports: { '.': { types: string; import: string } } }
    expect(pkg.exports['.']).toEqual({ types: './dist/index.d.ts', import: './dist/index.js' })
    expect(readFileSync(join(out, 'index.d.ts'), 'utf8')).toContain('createGateway')
    const built = (await import(pathToFileURL(join(out, 'index.js')).href)) as typeof import('../../client/src/index')
    const gw = built.createGateway({ baseUrl: 'http://127.0.0.1:1/', apiKey: 'k' })
    expect(typeof gw.messages.stream).toBe('function')
    expect(built.apiBase('https://gw.example.com/v1/')).toBe('https://gw.example.com/v1')
  }, 120_000)
})
