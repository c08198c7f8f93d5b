// scripts/chromium.mjs, which `npm test` runs first: finds a system browser, installs Debian's package as root when
// apt-get is there, and otherwise stops with instructions; with --warm it starts the browser once before any test.
// Fake `chromium` and `apt-get` on a private PATH stand in.
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ensureChromium } from '../../scripts/chromium.mjs'

const script = join(import.meta.dirname, '../../scripts/chromium.mjs')
const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

function bin(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'chromium-test-'))
  dirs.push(dir)
  for (const [name, body] of Object.entries(files)) {
    writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`)
    chmodSync(join(dir, name), 0o755)
  }
  return dir
}

function run(env: Record<string, string>, args: string[] = []) {
  return spawnSync(process.execPath, [script, ...args], { env, encoding: 'utf8' })
}

describe('scripts/chromium.mjs', () => {
  it('prints a chromium found on PATH', () => {
    const dir = bin({ chromium: 'exit 0' })
    const r = run({ PATH: dir })
    expect(r.status).toBe(0)
    expect(r.stdout.trim()).toBe(join(dir, 'chromium'))
  })

  it('prefers CHROMIUM_PATH, and refuses one that is not executable', () => {
    const dir = bin({ chromium: 'exit 0', 'my-chrome': 'exit 0' })
    expect(run({ PATH: dir, CHROMIUM_PATH: join(dir, 'my-chrome') }).stdout.trim()).toBe(join(dir, 'my-chrome'))
    const missing = run({ PATH: dir, CHROMIUM_PATH: join(dir, 'nope') })
    expect(missing.status).toBe(1)
    expect(missing.stderr).toContain('CHROMIUM_PATH')
  })

  it('stops with instructions when there is no browser and no way to install one', () => {
    const r = run({ PATH: bin({}) })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('No headless Chromium found')
    expect(r.stderr).toContain('apt-get install -y chromium')
  })

  /** A fake apt-get that records its arguments and, on install, puts a chromium where the script will look. */
  function fakeApt() {
    const target = bin({})
    const log = join(target, 'apt.log')
    const tools = bin({
      'apt-get': `echo "$DEBIAN_FRONTEND $*" >> ${log}\ncase "$1" in install) printf '#!/bin/sh\\n' > ${target}/chromium; /bin/chmod +x ${target}/chromium;; esac`,
    })
    mkdirSync(target, { recursive: true })
    return { env: { PATH: `${tools}:${target}` }, target, log }
  }

  it('installs Debian’s chromium package as root when apt-get is there', () => {
    const apt = fakeApt()
    const lines: string[] = []
    expect(ensureChromium(apt.env, (l: string) => lines.push(l), true)).toBe(join(apt.target, 'chromium'))
    expect(lines.join('\n')).toContain('installing Debian package chromium')
    expect(readFileSync(apt.log, 'utf8')).toBe('noninteractive update -qq\nnoninteractive install -y -qq chromium\n')
  })

  it('does not try apt-get when not root, and stops with instructions', () => {
    const apt = fakeApt()
    expect(() => ensureChromium(apt.env, () => undefined, false)).toThrow(/No headless Chromium found/)
    expect(existsSync(apt.log)).toBe(false)
  })

  it('with --warm, starts the browser once on a throwaway profile to render a page, and says how long it took', () => {
    const dir = bin({ chromium: `echo "$@" > "\${0%/*}/args"\necho '<html><body><p>warm</p></body></html>'` })
    const r = run({ PATH: dir }, ['--warm'])
    expect(r.status).toBe(0)
    expect(r.stdout.trim()).toBe(join(dir, 'chromium'))
    expect(r.stderr).toMatch(/\[chromium\] started once in \d+ ms/)
    const args = readFileSync(join(dir, 'args'), 'utf8')
    expect(args).toContain('--headless')
    expect(args).toMatch(/--user-data-dir=\S*chromium-warm-/)
    expect(args).toContain('--dump-dom')
  })

  it('with --warm, stops with the browser’s complaint when it cannot render a page', () => {
    const dir = bin({ chromium: 'echo "error while loading shared libraries: libnss3.so" >&2\nexit 127' })
    const r = run({ PATH: dir }, ['--warm'])
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('did not render a page (exit 127)')
    expect(r.stderr).toContain('libnss3.so')
  })
})
