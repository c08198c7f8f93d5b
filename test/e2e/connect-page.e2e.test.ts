/**
 * The hosted connect page in headless Chromium on a phone-sized screen, against the real local server, a relay in
 * sim mode and the simulated phone: the QR code appears and refreshes, the pairing code shows with its
 * instructions, and linking on the phone turns the page to its success state. With UPDATE_SCREENSHOTS=1 the
 * screenshots are written to docs/screenshots/ (docs/channels/alpha.md shows them); otherwise to a temporary directory.
 * Needs headless Chromium: scripts/chromium.mjs finds it (or installs Debian's package; `npm test` runs it first).
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SimServer } from '../../relay/sim/network/server'
import { repoRoot, startLocalServer, type LocalServer } from './local-server'
import { issueRelayToken, simPost, spawnRelay, startSim, type RelayProc } from './relay-harness'

const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]
const shotsDir = process.env.UPDATE_SCREENSHOTS === '1' ? join(repoRoot, 'docs/screenshots') : mkdtempSync(join(tmpdir(), 'connect-shots-'))

let server: LocalServer
let sim: SimServer
let relay: RelayProc
let browser: BrowserContext
let profile: string

beforeAll(async () => {
  ;[server, sim] = await Promise.all([startLocalServer(), startSim()])
  relay = spawnRelay(server, (await issueRelayToken(server)).token, sim)
  profile = mkdtempSync(join(tmpdir(), 'chromium-profile-'))
  // A persistent context is how Playwright takes a fresh --user-data-dir.
  const executablePath = execFileSync(process.execPath, [join(repoRoot, 'scripts/chromium.mjs')], { encoding: 'utf8' }).trim()
  browser = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: FLAGS,
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
  })
  await relay.linked
})
afterAll(async () => {
  await browser?.close()
  await relay?.kill('SIGKILL')
  await Promise.all([sim?.close(), server?.stop()])
  rmSync(profile, { recursive: true, force: true })
  if (process.env.UPDATE_SCREENSHOTS !== '1') rmSync(shotsDir, { recursive: true, force: true })
})

async function connectUrl(json: Record<string, unknown>): Promise<string> {
  const { key } = await server.newTenant()
  const res = await fetch(`${server.url}/v1/channels/alpha-web/connections`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: JSON.stringify(json),
  })
  const r = (await res.json()) as { connect_url: string }
  return r.connect_url
}

async function shot(page: Page, name: string): Promise<void> {
  const file = join(shotsDir, name)
  await page.screenshot({ path: file, fullPage: true })
  const png = readFileSync(file)
  expect(png.subarray(1, 4).toString()).toBe('PNG')
}

describe('connect page on a phone screen', () => {
  it('shows a scannable QR code with instructions and a countdown, then the success state once the phone links', async () => {
    const phone = '+15559990001'
    const page = await browser.newPage()
    await page.goto(await connectUrl({ phone_number: phone }))
    const qr = page.locator('#qr')
    await qr.waitFor({ state: 'visible', timeout: 15_000 })
    expect(await qr.getAttribute('src')).toMatch(/^data:image\/png;base64,/)
    const box = await qr.boundingBox()
    expect(box!.width).toBeGreaterThan(250)
    expect(box!.x + box!.width).toBeLessThanOrEqual(390)
    await expect.poll(() => page.locator('#left').textContent()).toMatch(/\d+ s/)
    expect(await page.textContent('body')).toContain('Linked devices')
    await shot(page, 'connect-page-qr.png')

    await simPost(sim, `/alpha/${encodeURIComponent(phone)}/link`)
    await page.getByRole('heading', { name: 'Connected' }).waitFor({ timeout: 15_000 })
    await shot(page, 'connect-page-connected.png')
    await page.close()
  })

  it('shows the pairing code split for reading, with how to type it on the phone', async () => {
    const page = await browser.newPage()
    await page.goto(await connectUrl({ phone_number: '+15559990002', link_method: 'pairing_code' }))
    const code = page.locator('#code')
    await code.waitFor({ state: 'visible', timeout: 15_000 })
    expect(await code.textContent()).toMatch(/^[1-9A-HJ-NP-Z]{4}-[1-9A-HJ-NP-Z]{4}$/)
    expect(await page.textContent('body')).toContain('Link with phone number instead')
    await shot(page, 'connect-page-pairing-code.png')
    await page.close()
  })

  it('says the link expired for a tampered token', async () => {
    const page = await browser.newPage()
    const url = await connectUrl({ phone_number: '+15559990003' })
    const res = await page.goto(url.replace(/.{4}$/, '0000'))
    expect(res?.status()).toBe(403)
    expect(await page.textContent('h1')).toBe('Link not valid')
    await page.close()
  })
})
