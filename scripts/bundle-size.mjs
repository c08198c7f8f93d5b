// Builds the production bundle the way `wrangler deploy` would (--dry-run, nothing uploaded) and prints its size.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'

const out = mkdtempSync(join(tmpdir(), 'gateway-bundle-'))
const r = spawnSync('wrangler', ['deploy', '--dry-run', '--outdir', out], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' })
if (r.status !== 0) {
  process.stdout.write(r.stdout ?? '')
  process.exit(r.status ?? 1)
}
let raw = 0
let gz = 0
for (const f of readdirSync(out)) {
  const p = join(out, f)
  if (!statSync(p).isFile() || f.endsWith('.map')) continue
  const bytes = readFileSync(p)
  raw += bytes.length
  gz += gzipSync(bytes).length
}
rmSync(out, { recursive: true, force: true })
console.log(`[bundle] worker bundle: ${(raw / 1024).toFixed(1)} KiB, gzip ${(gz / 1024).toFixed(1)} KiB`)
