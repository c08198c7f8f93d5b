// Finds or provides the headless Chromium the connect-page e2e test drives, so `npm test` works on a fresh machine.
// Order: $CHROMIUM_PATH, a system browser on PATH, then (as root with apt-get) Debian's `chromium` package. Never a
// browser download from elsewhere. `node scripts/chromium.mjs` prints the executable's path, or exits 1 saying why.
import { spawnSync } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const NAMES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome']

function executable(path) {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

function onPath(name, env) {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, name))) return join(dir, name)
  }
  return null
}

/** The browser already on this machine, or null. */
export function findChromium(env = process.env) {
  if (env.CHROMIUM_PATH) return executable(env.CHROMIUM_PATH) ? env.CHROMIUM_PATH : null
  for (const name of NAMES) {
    const found = onPath(name, env)
    if (found) return found
  }
  return null
}

const HELP = `No headless Chromium found, and none could be installed.
  Debian/Ubuntu:  sudo apt-get install -y chromium
  macOS:          brew install --cask chromium
  or point CHROMIUM_PATH at any Chromium or Chrome executable, then run npm test again.`

/** Finds Chromium, installing Debian's package when running as root with apt-get; throws HELP when neither works. */
export function ensureChromium(env = process.env, log = (line) => console.log(line)) {
  const found = findChromium(env)
  if (found) return found
  const apt = onPath('apt-get', env)
  const root = typeof process.getuid === 'function' && process.getuid() === 0
  if (apt && root && env.CHROMIUM_PATH === undefined) {
    log('[chromium] installing Debian package chromium for the connect-page test…')
    const opts = { env: { ...env, DEBIAN_FRONTEND: 'noninteractive' }, stdio: ['ignore', 'ignore', 'inherit'] }
    const ok = spawnSync(apt, ['update', '-qq'], opts).status === 0 && spawnSync(apt, ['install', '-y', '-qq', 'chromium'], opts).status === 0
    const installed = ok ? findChromium(env) : null
    if (installed) return installed
  }
  throw new Error(HELP)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    console.log(ensureChromium(process.env, (line) => console.error(line)))
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err))
    process.exit(1)
  }
}
