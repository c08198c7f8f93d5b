// Makes `npm start` and `npm test` work on a fresh clone: installs the locked dependencies (which bring their own
// Node 24 for wrangler) when node_modules is missing or older than package-lock.json. Runs on the system Node (>= 18).
import { createHash } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const lock = join(root, 'package-lock.json')
const stamp = join(root, 'node_modules', '.install-stamp')
const wanted = createHash('sha256').update(readFileSync(lock)).digest('hex')
const installed = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : ''

if (installed !== wanted || !existsSync(join(root, 'node_modules', '.bin', 'wrangler'))) {
  console.log('[bootstrap] installing dependencies…')
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  // `npm install` rather than `npm ci`: it honours package-lock.json too, but does not refuse a lock that lacks other
  // platforms' optional binaries (workerd-darwin-*), which registry mirrors without those packages produce.
  const r = spawnSync(npm, ['install', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' })
  if (r.status !== 0) process.exit(r.status ?? 1)
  writeFileSync(stamp, wanted)
}
