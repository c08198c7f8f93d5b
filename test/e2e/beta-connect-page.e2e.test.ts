/**
 * beta's hosted login page end to end: the real local server (wrangler dev), a real relay process in sim mode running
 * the real beta driver, and the simulated beta network in this process, with the page in headless Chromium on a
 * phone-sized screen. Flows: code; code with a wrong first try; code + two-step password; QR, replaced before its
 * token lapses, then scanned; QR + password; a link that expires while open and one opened too late. With
 * UPDATE_SCREENSHOTS=1 one screenshot per step is written to docs/screenshots/beta-connect-*.png (docs/channels/beta.md).
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { startSimNetwork } from '../../relay/sim/network/server'
import { signToken } from '../../worker/lib/signed-token'
import { connectPageSuite } from './connect-page-suite'
import { eventually, simGet, simPost } from './relay-harness'

/** Login tokens live 8 s here (beta's are 30 s), so a replacement shows within the test; the relay re-exports 2 s early. */
const QR_MS = 8000
const ENCRYPTION_KEY = randomBytes(32).toString('base64')

const suite = connectPageSuite({ shots: 'beta-connect', vars: { ENCRYPTION_KEY }, startSim: () => startSimNetwork({ betaTiming: { qrMs: QR_MS } }) })

let seq = 0
const newPhone = () => `+1555${String(Date.now() % 100_000).padStart(5, '0')}${String(seq++ % 100).padStart(2, '0')}`
const enc = (phone: string) => encodeURIComponent(phone)

type Started = { phone: string; url: string; tenantId: string; key: string; answer: Record<string, unknown> }

async function connect(mode: 'code' | 'qr', phone = newPhone()): Promise<Started> {
  const { tenantId, key } = await suite.server.newTenant()
  const res = await suite.server.api(key, 'POST', '/channels/beta/connect', { phone_number: phone, mode })
  expect(res.status, JSON.stringify(res.json)).toBe(200)
  expect(res.json.connect_url).toEqual(expect.stringContaining('/v1/channels/beta/connect/page?token='))
  return { phone, url: res.json.connect_url as string, tenantId, key, answer: res.json }
}

async function shot(page: Page, name: string): Promise<void> {
  const file = join(suite.device.shotsDir, name)
  await page.screenshot({ path: file, fullPage: true })
  expect(readFileSync(file).subarray(1, 4).toString()).toBe('PNG')
}

/** The code the simulated beta app received for the number's newest code login. */
async function appCode(phone: string): Promise<string> {
  return eventually(async () => (await simGet<{ code?: string }>(suite.sim, `/beta/${enc(phone)}/code`)).code, 10_000, 'login code in the app')
}

async function connected(page: Page, s: Started): Promise<void> {
  await page.getByRole('heading', { name: 'Connected' }).waitFor({ timeout: 20_000 })
  const status = await suite.server.api(s.key, 'GET', `/channels/beta/connect/${enc(s.phone)}/status`)
  expect(status.json).toMatchObject({ status: 'connected', telegram_user_id: expect.any(String) })
  expect((await simGet(suite.sim, `/beta/${enc(s.phone)}`)).logged_in_sessions).toBe(1)
}

describe('beta login page on a phone screen', { timeout: 120_000 }, () => {
  it('code: asks for the code the app received, then says connected', async () => {
    const s = await connect('code')
    const page = await suite.device.context.newPage()
    await page.goto(s.url)
    const input = page.locator('#code')
    await input.waitFor({ state: 'visible', timeout: 20_000 })
    expect(await page.textContent('body')).toContain('beta sent a login code to your beta app')
    const box = await input.boundingBox()
    expect(box!.x + box!.width).toBeLessThanOrEqual(390)
    await shot(page, 'beta-connect-code.png')

    const code = await appCode(s.phone)
    await input.fill(code)
    await page.click('#submit')
    await connected(page, s)
    expect(await page.textContent('body')).not.toContain(code)
    await shot(page, 'beta-connect-connected.png')
    await page.close()
  })

  it('code: a wrong code shows a clear error and the right one still logs in', async () => {
    const s = await connect('code')
    const page = await suite.device.context.newPage()
    await page.goto(s.url)
    await page.locator('#code').waitFor({ state: 'visible', timeout: 20_000 })
    const code = await appCode(s.phone)
    const wrong = code.replace(/^./, (d) => String((Number(d) + 1) % 10))
    await page.fill('#code', wrong)
    await page.click('#submit')
    await expect.poll(() => page.textContent('#err'), { timeout: 15_000 }).toContain('That code is not right')
    await shot(page, 'beta-connect-wrong-code.png')

    await page.fill('#code', code)
    await page.click('#submit')
    await connected(page, s)
    await page.close()
  })

  it('code + two-step password: shows the hint, refuses a wrong password, then logs in', async () => {
    const phone = newPhone()
    expect((await simPost(suite.sim, `/beta/${enc(phone)}/password`, { password: 'correct horse', hint: 'the stable' })).status).toBe(200)
    const s = await connect('code', phone)
    const page = await suite.device.context.newPage()
    await page.goto(s.url)
    await page.locator('#code').waitFor({ state: 'visible', timeout: 20_000 })
    await page.fill('#code', await appCode(phone))
    await page.click('#submit')
    const password = page.locator('#password')
    await password.waitFor({ state: 'visible', timeout: 15_000 })
    expect(await password.getAttribute('type')).toBe('password')
    expect(await page.textContent('#hint')).toContain('the stable')
    await shot(page, 'beta-connect-password.png')

    await password.fill('wrong horse')
    await page.click('#submit')
    await expect.poll(() => page.textContent('#err'), { timeout: 15_000 }).toContain('That password is not right')
    expect(await password.inputValue()).toBe('')
    await password.fill('correct horse')
    await page.click('#submit')
    await connected(page, s)
    expect(await page.content()).not.toContain('correct horse')
    await page.close()
  })

  it('QR: shows the login QR, replaces it before its token lapses, and connects once the phone scans it', async () => {
    const s = await connect('qr')
    const page = await suite.device.context.newPage()
    await page.goto(s.url)
    const qr = page.locator('#qr')
    await qr.waitFor({ state: 'visible', timeout: 20_000 })
    const first = await qr.getAttribute('src')
    expect(first).toMatch(/^data:image\/png;base64,/)
    const box = await qr.boundingBox()
    expect(box!.width).toBeGreaterThan(250)
    expect(box!.x + box!.width).toBeLessThanOrEqual(390)
    expect(await page.textContent('body')).toContain('Link Desktop Device')
    await shot(page, 'beta-connect-qr.png')

    // The relay re-exports the token 2 s before it lapses; the page swaps the image in place.
    await expect.poll(() => qr.getAttribute('src'), { timeout: QR_MS + 10_000, interval: 250 }).not.toBe(first)
    expect(await qr.getAttribute('src')).toMatch(/^data:image\/png;base64,/)

    expect((await simPost(suite.sim, `/beta/${enc(s.phone)}/qr/accept`)).status).toBe(200)
    await connected(page, s)
    await page.close()
  })

  it('QR + two-step password: after the scan the page asks for the password', async () => {
    const phone = newPhone()
    expect((await simPost(suite.sim, `/beta/${enc(phone)}/password`, { password: 'qr pass 2' })).status).toBe(200)
    const s = await connect('qr', phone)
    const page = await suite.device.context.newPage()
    await page.goto(s.url)
    await page.locator('#qr').waitFor({ state: 'visible', timeout: 20_000 })
    expect((await simPost(suite.sim, `/beta/${enc(phone)}/qr/accept`)).status).toBe(200)
    const password = page.locator('#password')
    await password.waitFor({ state: 'visible', timeout: 15_000 })
    await shot(page, 'beta-connect-qr-password.png')
    await password.fill('qr pass 2')
    await page.click('#submit')
    await connected(page, s)
    await page.close()
  })

  it('an expired link: the open page says so when it lapses, and a late visit gets 410', async () => {
    const s = await connect('code')
    const token = await signToken(ENCRYPTION_KEY, 'beta-connect-page', { tenant: s.tenantId, account: s.phone }, Date.now() + 4000)
    const url = `${new URL(s.url).origin}/v1/channels/beta/connect/page?token=${encodeURIComponent(token)}`
    const page = await suite.device.context.newPage()
    await page.goto(url)
    await page.locator('#code').waitFor({ state: 'visible', timeout: 20_000 })
    await page.locator('#expired').waitFor({ state: 'visible', timeout: 15_000 })
    expect(await page.textContent('body')).toContain('Ask for a new link')
    await shot(page, 'beta-connect-expired.png')
    // A code typed into a page that lapsed goes nowhere: the submission is refused with 410 too.
    const late = await fetch(`${url.replace('/page?', '/page/code?')}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"code":"12345"}',
    })
    expect(late.status).toBe(410)
    const res = await page.goto(url)
    expect(res?.status()).toBe(410)
    expect(await page.textContent('h1')).toBe('Link expired')

    const tampered = await page.goto(s.url.replace(/.{4}$/, '0000'))
    expect(tampered?.status()).toBe(403)
    expect(await page.textContent('h1')).toBe('Link not valid')
    await shot(page, 'beta-connect-invalid.png')
    await page.close()
  })
})
