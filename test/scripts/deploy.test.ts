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
/** The directory (DB and DB_SHARD_0 share its id) and shard 1 created: real ids in place of the placeholders. */
const realDb = repoToml
  .replaceAll('database_id = "00000000-0000-0000-0000-000000000000"', 'database_id = "3f2a8f0e-1111-4222-8333-944455556666"')
  .replace('database_id = "00000000-0000-0000-0000-000000000001"', 'database_id = "7c1d2e3f-1111-4222-8333-944455557777"')

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

  it('names every problem at once: the placeholder database ids too, with the command that creates each', () => {
    const r = deploy(repoToml)
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('placeholder D1 database ids (DB, DB_SHARD_1)')
    expect(r.stderr).toContain('npx wrangler d1 create messaging-gateway-shard-1')
    expect(r.stderr).toContain('PUBLIC_BASE_URL')
  })

  it('names a shard still on its placeholder when the directory has its id', () => {
    const r = deploy(realDb.replace('database_id = "7c1d2e3f-1111-4222-8333-944455557777"', 'database_id = "00000000-0000-0000-0000-000000000002"'))
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('placeholder D1 database ids (DB_SHARD_1)')
  })

  it('goes on to wrangler once both are set', () => {
    const r = deploy(realDb.replace('PUBLIC_BASE_URL = ""', 'PUBLIC_BASE_URL = "https://gw.example.com"'))
    expect(r.stderr).not.toContain('PUBLIC_BASE_URL')
    expect(r.stderr).not.toContain('placeholder')
  })
})
