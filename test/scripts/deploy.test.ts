// scripts/deploy.mjs refuses before touching anything remote: a placeholder database id or no PUBLIC_BASE_URL.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '../..')
const dir = mkdtempSync(join(tmpdir(), 'deploy-test-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function deploy(toml: string) {
  const file = join(dir, `wrangler-${Math.random().toString(36).slice(2)}.toml`)
  writeFileSync(file, toml)
  // An empty PATH: were the checks to pass, no wrangler could run anyway.
  return spawnSync(process.execPath, [join(root, 'scripts/deploy.mjs')], { env: { PATH: '', DEPLOY_WRANGLER_TOML: file }, encoding: 'utf8' })
}

const repoToml = readFileSync(join(root, 'wrangler.toml'), 'utf8')
const realDb = repoToml.replace(/database_id = "[^"]*"/, 'database_id = "3f2a8f0e-1111-4222-8333-944455556666"')

describe('npm run deploy', () => {
  it('refuses without PUBLIC_BASE_URL, saying how to set it', () => {
    const r = deploy(realDb)
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('PUBLIC_BASE_URL in wrangler.toml [vars] is empty')
  })

  it('refuses a PUBLIC_BASE_URL that is not an https origin', () => {
    const r = deploy(realDb.replace('PUBLIC_BASE_URL = ""', 'PUBLIC_BASE_URL = "http://gw.example.com"'))
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('not an https origin')
  })

  it('names every problem at once: the placeholder database id too', () => {
    const r = deploy(repoToml)
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('placeholder D1 database_id')
    expect(r.stderr).toContain('PUBLIC_BASE_URL')
  })

  it('goes on to wrangler once both are set', () => {
    const r = deploy(realDb.replace('PUBLIC_BASE_URL = ""', 'PUBLIC_BASE_URL = "https://gw.example.com"'))
    expect(r.stderr).not.toContain('PUBLIC_BASE_URL')
    expect(r.stderr).not.toContain('placeholder')
  })
})
