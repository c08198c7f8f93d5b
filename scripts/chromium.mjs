// Finds or provides the headless Chromium the hosted-page e2e tests drive, so `npm test` works on a fresh machine.
// Order: $CHROMIUM_PATH, a system browser on PATH, then (as root with apt-get) Debian's `chromium` package. Never a
// browser download from elsewhere. `node scripts/chromium.mjs` prints the executable's path, or exits 1 saying why;
// with --warm (npm test's pretest) it also starts the browser once, so whatever a first launch on this machine costs
// (reading a fresh 350 MB install from disk, creating the user's font, NSS and dconf caches) is paid here, with its
// own time, and not inside the first test file's set-up.
import { spawnSync } from 'node:child_process'
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
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

const runningAsRoot = () => typeof process.getuid === 'function' && process.getuid() === 0

/**
 * Finds Chromium, installing Debian's package when running as root with apt-get; throws HELP when neither works.
 * `root` says whether this process may install packages (passed in by the tests, which run as any user).
 */
export function ensureChromium(env = process.env, log = (line) => console.log(line), root = runningAsRoot()) {
  const found = findChromium(env)
  if (found) return found
  const apt = onPath('apt-get', env)
  if (apt && root && env.CHROMIUM_PATH === undefined) {
    log('[chromium] installing Debian package chromium for the connect-page test…')
    const opts = { env: { ...env, DEBIAN_FRONTEND: 'noninteractive' }, stdio: ['ignore', 'ignore', 'inherit'] }
    const ok = spawnSync(apt, ['update', '-qq'], opts).status === 0 && spawnSync(apt, ['install', '-y', '-qq', 'chromium'], opts).status === 0
    const installed = ok ? findChromium(env) : null
    if (installed) return installed
  }
  throw new Error(HELP)
}

/** How long the warm-up launch may take: a cold first start on a loaded 2-core machine, with room to spare. */
export const WARM_TIMEOUT_MS = 120_000

/**
 * Starts the browser once, headless with a throwaway profile, and has it render a page with text (fonts load).
 * Returns how long it took, or throws saying why the browser does not start (missing libraries, a broken install).
 */
export function warmChromium(path, env = process.env, timeoutMs = WARM_TIMEOUT_MS) {
  const profile = mkdtempSync(join(tmpdir(), 'chromium-warm-'))
  const started = Date.now()
  try {
    const args = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', `--user-data-dir=${profile}`, '--dump-dom', 'data:text/html,<p>warm</p>']
    const r = spawnSync(path, args, { env, encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'] })
    if (r.error || r.status !== 0 || !r.stdout.includes('<p>warm</p>')) {
      const why = r.error ? r.error.message : `exit ${r.status ?? r.signal}`
      throw new Error(`Chromium at ${path} did not render a page (${why}):\n${(r.stderr ?? '').split('\n').slice(-5).join('\n')}`)
    }
    return Date.now() - started
  } finally {
    rmSync(profile, { recursive: true, force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const path = ensureChromium(process.env, (line) => console.error(line))
    if (process.argv.includes('--warm')) console.error(`[chromium] started once in ${warmChromium(path)} ms`)
    console.log(path)
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err))
    process.exit(1)
  }
}
