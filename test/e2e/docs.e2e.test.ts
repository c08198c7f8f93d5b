/**
 * The docs cannot drift from the code: every ```sh runnable block in README.md and docs/** runs against the real local
 * server (wrangler dev) with the tour's variables (GW, KEY, ADMIN_TOKEN) and the printed key substituted, and must
 * exit 0 without an error body. The links between the pages are checked in docs-links.test.ts (no server needed).
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { docPages, ERROR_BODY, runBlock, runnableBlocks } from './docs-markdown'
import { repoRoot } from './local-server'
import { localSuite } from './local-suite'

const local = localSuite()
const pages = docPages(repoRoot).map((file) => ({ file, text: readFileSync(file, 'utf8') }))
const blocks = pages.flatMap((p) => runnableBlocks(p.file.slice(repoRoot.length + 1), p.text))

/** What a reader pastes by hand: the local URL npm start prints and the key / admin token placeholders. */
function runDocBlock(code: string, env: { base: string; key: string; adminToken: string }) {
  return runBlock(code, { GW: `${env.base}/v1`, KEY: env.key, ADMIN_TOKEN: env.adminToken }, [
    ['http://127.0.0.1:8787', env.base],
    ['svc_live_...', env.key],
    ['adm_...', env.adminToken],
  ])
}

describe('runnable blocks in the docs', () => {
  it('finds the tour and a runnable block on the reference pages', () => {
    const files = new Set(blocks.map((b) => b.file))
    expect(files).toContain('README.md')
    expect(files).toContain('docs/api.md')
    expect(blocks.filter((b) => b.file === 'README.md').length).toBeGreaterThanOrEqual(5)
  })

  it('runs every block, in page order, against the local server with one printed key', async () => {
    const { key } = await local.server.newTenant()
    const env = { base: local.server.url, key, adminToken: local.server.adminToken }
    const failures: string[] = []
    for (const block of blocks) {
      const r = await runDocBlock(block.code, env)
      const out = `${r.stdout ?? ''}${r.stderr ?? ''}`
      if (r.status !== 0) failures.push(`${block.file}:${block.line} exited ${r.status ?? r.signal}\n${out}`)
      else if (ERROR_BODY.test(r.stdout)) failures.push(`${block.file}:${block.line} printed an error body\n${out}`)
    }
    expect(failures).toEqual([])
  }, 300_000)

  it('a failing command fails its block (set -e, pipefail)', async () => {
    const env = { base: local.server.url, key: 'svc_live_not-a-key', adminToken: 'adm_wrong' }
    expect((await runDocBlock('curl -sf -H "Authorization: Bearer $KEY" $GW/usage', env)).status).not.toBe(0)
    expect((await runDocBlock('false | cat\necho after', env)).status).not.toBe(0)
  })
})
