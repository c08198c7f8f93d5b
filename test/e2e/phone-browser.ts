/**
 * Headless Chromium sized like a phone, for the hosted-page tests: the browser comes from scripts/chromium.mjs (a
 * system one, or Debian's package installed by `npm test`), with a fresh profile, and screenshots go to
 * docs/screenshots/ only with UPDATE_SCREENSHOTS=1.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium } from 'playwright-core'
import { repoRoot } from './local-server'

const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/**
 * The launch's own time limit (Playwright's default is 180 s, longer than the set-up hooks that call this): npm test's
 * pretest has already started the browser once (scripts/chromium.mjs --warm), so a launch here takes seconds.
 */
export const LAUNCH_TIMEOUT_MS = 60_000

export type PhoneBrowser = { context: BrowserContext; shotsDir: string; close(): Promise<void> }

/** A desktop-sized window instead of a phone's (the API reference page). */
export type BrowserShape = { desktop?: boolean }

export async function openPhoneBrowser(label: string, shape: BrowserShape = {}): Promise<PhoneBrowser> {
  const shotsDir = process.env.UPDATE_SCREENSHOTS === '1' ? join(repoRoot, 'docs/screenshots') : mkdtempSync(join(tmpdir(), `${label}-shots-`))
  const profile = mkdtempSync(join(tmpdir(), 'chromium-profile-'))
  const executablePath = execFileSync(process.execPath, [join(repoRoot, 'scripts/chromium.mjs')], { encoding: 'utf8' }).trim()
  // A persistent context is how Playwright takes a fresh --user-data-dir.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    timeout: LAUNCH_TIMEOUT_MS,
    args: FLAGS,
    ...(shape.desktop
      ? { viewport: { width: 1280, height: 900 } }
      : { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true }),
  })
  return {
    context,
    shotsDir,
    async close() {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
      if (process.env.UPDATE_SCREENSHOTS !== '1') rmSync(shotsDir, { recursive: true, force: true })
    },
  }
}
