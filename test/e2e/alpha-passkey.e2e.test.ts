/**
 * alpha passkey linking end to end: the real gateway (wrangler dev) with a tenant that has alpha_passkey_linking, a
 * relay (the real relay core and alpha driver, in this process) whose Baileys socket is the scripted fake with the fake
 * primary behind it (test/fixtures/alpha-passkey-primary.ts), and Chromium: the connect page on a phone screen, and a
 * desktop browser with the helper extension (docs/alpha-passkey-helper/, its match pattern pointed at a local origin
 * standing in for web.whatsapp.com) and a virtual WebAuthn authenticator holding the owner's passkey (rpId: that
 * origin's host). The bookmarklet, the same helper run in the page itself, then meets the spent link.
 * Why the primary is not in the simulator: the ceremony's stanzas are Baileys' and the driver's, which only the alpha
 * driver speaks; the simulator plays alpha's devices at its own protocol and keeps the passkey demand of a tenant
 * without the setting (relay-flow e2e).
 */
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeAlphaDriver } from '../../relay/alpha/client'
import { loadConfig } from '../../relay/config'
import { startRelay, type Relay } from '../../relay/relay'
import { FakePasskeyPrimary } from '../fixtures/alpha-passkey-primary'
import { fakeSockets } from '../fixtures/alpha-socket'
import { newPasskey } from '../fixtures/passkey-authenticator'
import { PASSKEY_BOOKMARKLET } from '../../worker/channels/alpha/passkey-bookmarklet'
import { freePort, repoRoot, startLocalServer, type LocalServer } from './local-server'
import { openPhoneBrowser, type PhoneBrowser } from './phone-browser'
import { eventually, issueRelayToken, SESSION_KEY } from './relay-harness'

let server: LocalServer
let relay: Relay
let device: PhoneBrowser
let desktop: BrowserContext
let site: Server
let helperOrigin: string
const scratch = mkdtempSync(join(tmpdir(), 'alpha-passkey-'))
const sockets = fakeSockets()

/** The extension folder as shipped, with its one match pattern (web.whatsapp.com) pointed at the stand-in origin. */
function extensionForStandIn(): string {
  const dir = join(scratch, 'extension')
  cpSync(join(repoRoot, 'docs/alpha-passkey-helper'), dir, { recursive: true })
  const manifest = readFileSync(join(dir, 'manifest.json'), 'utf8')
  expect(manifest).toContain('"https://web.whatsapp.com/*"')
  writeFileSync(join(dir, 'manifest.json'), manifest.replace('"https://web.whatsapp.com/*"', JSON.stringify(`${helperOrigin}/*`)))
  return dir
}

beforeAll(async () => {
  const port = await freePort()
  helperOrigin = `http://localhost:${port}`
  site = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' })
    res.end('<!doctype html><html lang="en"><title>web.whatsapp.com (stand-in)</title><body><h1>WhatsApp Web (test stand-in)</h1></body></html>')
  })
  await new Promise<void>((r) => site.listen(port, '127.0.0.1', r))
  server = await startLocalServer({ vars: { ALPHA_PASSKEY_HELPER_ORIGINS: helperOrigin } })
  const { token } = await issueRelayToken(server)
  const driver = makeAlphaDriver({ makeSocket: sockets.makeSocket, fetchVersion: async () => ({ version: [2, 3000, 1], isLatest: false }) })
  relay = await startRelay(
    loadConfig({
      GATEWAY_URL: server.url,
      RELAY_TOKEN: token,
      RELAY_SESSION_KEY: SESSION_KEY,
      RELAY_DRIVER: 'alpha',
      RELAY_HEALTH_PORT: 'off',
      LOG_LEVEL: 'warn',
    }),
    { drivers: { alpha_web: driver } }
  )
  device = await openPhoneBrowser('alpha-passkey')
  const extension = extensionForStandIn()
  desktop = await chromium.launchPersistentContext(join(scratch, 'profile'), {
    executablePath: execFileSync(process.execPath, [join(repoRoot, 'scripts/chromium.mjs')], { encoding: 'utf8' }).trim(),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', `--disable-extensions-except=${extension}`, `--load-extension=${extension}`],
    viewport: { width: 1024, height: 700 },
  })
})
afterAll(async () => {
  await desktop?.close()
  rmSync(scratch, { recursive: true, force: true })
  await device?.close()
  await relay?.drain()
  await server?.stop()
  await new Promise((r) => site?.close(r))
})

async function shot(page: Page, name: string): Promise<void> {
  const file = join(device.shotsDir, name)
  await page.screenshot({ path: file, fullPage: true })
  expect(readFileSync(file).subarray(1, 4).toString()).toBe('PNG')
}

describe('linking an alpha number whose phone asks for a passkey', () => {
  it('goes from the connect page through the helper on the stand-in origin to the code and connected', async () => {
    const { tenantId, key } = await server.newTenant()
    const patched = await fetch(`${server.url}/admin/tenants/${tenantId}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ alpha_passkey_linking: true }),
    })
    expect(patched.status).toBe(200)
    const phone = '+15557770001'
    const started = await server.api<{ connect_url: string }>(key, 'POST', '/channels/alpha-web/connections', { phone_number: phone })
    expect(started.status).toBe(200)

    // The relay opens a linking socket; alpha hands it refs and the page shows the QR code.
    const sock = await eventually(() => sockets.sockets[0], 30_000, 'a linking socket')
    sock.pairDevice(6)
    const connect = await device.context.newPage()
    await connect.goto(started.json.connect_url)
    await connect.locator('#qr').waitFor({ state: 'visible', timeout: 15_000 })
    const qr = await eventually(
      async () => (await server.api<{ qr_code: string | null }>(key, 'GET', `/channels/alpha-web/connections/${encodeURIComponent(phone)}/qr`)).json.qr_code,
      10_000,
      'the QR code'
    )

    // The phone scans it, and alpha asks for the owner's passkey for this origin's host.
    const passkey = newPasskey('localhost')
    const primary = new FakePasskeyPrimary({ rpId: 'localhost', origin: helperOrigin, passkey, phoneDigits: phone.slice(1) })
    primary.holdPairSuccess = true
    primary.scan(sock, qr)
    primary.requestPasskey()
    const field = connect.locator('#passkey-link')
    await field.waitFor({ state: 'visible', timeout: 15_000 })
    const link = await field.inputValue()
    expect(link).toMatch(/\/connect\/alpha-web\/passkey#.+/)
    expect(await connect.textContent('body')).toContain('web.whatsapp.com')
    await shot(connect, 'connect-page-passkey.png')
    const status = await server.api<{ status: string; reason: string }>(key, 'GET', `/channels/alpha-web/connections/${encodeURIComponent(phone)}/status`)
    expect(status.json).toMatchObject({ status: 'connecting', reason: 'passkey_required' })

    // On the stand-in for web.whatsapp.com, opened with the link in the fragment: the extension's helper takes it; a
    // virtual authenticator holds the owner's passkey.
    const open = await connect.locator('#open-web').getAttribute('href')
    expect(open).toBe(`${helperOrigin}/#gateway-passkey=${encodeURIComponent(link)}`)
    const web = await desktop.newPage()
    await web.goto(open!)
    const cdp = await desktop.newCDPSession(web)
    await cdp.send('WebAuthn.enable')
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    })
    await cdp.send('WebAuthn.addCredential', {
      authenticatorId,
      credential: {
        credentialId: passkey.id.toString('base64'),
        isResidentCredential: true,
        rpId: 'localhost',
        privateKey: passkey.pkcs8,
        userHandle: passkey.userHandle.toString('base64'),
        signCount: 0,
      },
    })
    await expect.poll(() => web.locator('#gateway-passkey-helper #link').inputValue(), { timeout: 10_000 }).toBe(link)
    expect(web.url()).toBe(`${helperOrigin}/`)
    await web.locator('#gateway-passkey-helper #go').click()
    await expect.poll(() => web.locator('#gateway-passkey-helper #status').textContent(), { timeout: 20_000 }).toContain('Done')
    await shot(web, 'alpha-passkey-helper.png')
    expect(primary.refusals).toEqual([])
    expect(primary.handoffProof).toBe(true)

    // The link works once: the bookmarklet (the helper run in the page) is told so when it tries it again.
    const again = await device.context.newPage()
    await again.goto(`${helperOrigin}/`)
    await again.evaluate(decodeURIComponent(PASSKEY_BOOKMARKLET.slice('javascript:'.length)))
    await again.locator('#gateway-passkey-helper #link').fill(link)
    await again.locator('#gateway-passkey-helper #go').click()
    await expect.poll(() => again.locator('#gateway-passkey-helper #status').textContent(), { timeout: 10_000 }).toContain('once')

    // Back on the connect page: the code the phone shows; then the owner confirms on the phone and the link is done.
    const code = connect.locator('#passkey-code')
    await code.waitFor({ state: 'visible', timeout: 15_000 })
    expect(await code.textContent()).toBe(primary.code)
    await shot(connect, 'connect-page-passkey-code.png')
    primary.confirmOnPhone()
    const reopened = await eventually(() => sockets.sockets[1], 15_000, 'the socket after pair-success')
    reopened.open()
    await connect.getByRole('heading', { name: 'Connected' }).waitFor({ timeout: 15_000 })
    const done = await server.api<{ status: string }>(key, 'GET', `/channels/alpha-web/connections/${encodeURIComponent(phone)}/status`)
    expect(done.json.status).toBe('connected')
    expect(Buffer.from(reopened.config.auth.creds.advSecretKey, 'base64').equals(primary.pairingRequest!.advSecret)).toBe(true)
  })
})
