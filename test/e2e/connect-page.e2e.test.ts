import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { connectPageSuite } from './connect-page-suite'
import { simPost, startSim } from './relay-harness'

const suite = connectPageSuite({ shots: 'connect', startSim })

async function connectUrl(json: Record<string, unknown>): Promise<string> {
  const { key } = await suite.server.newTenant()
  const res = await fetch(`${suite.server.url}/v1/channels/alpha-web/connections`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: JSON.stringify(json),
  })
  const r = (await res.json()) as { connect_url: string }
  return r.connect_url
}

async function shot(page: Page, name: string): Promise<void> {
  const file = join(suite.device.shotsDir, name)
  await page.screenshot({ path: file, fullPage: true })
  const png = readFileSync(file)
  expect(png.subarray(1, 4).toString()).toBe('PNG')
}

describe('connect page on a phone screen', () => {
  it('shows a scannable QR code with instructions and a countdown, then the success state once the phone links', async () => {
    const phone = '+15559990001'
    const page = await suite.device.context.newPage()
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

    await simPost(suite.sim, `/alpha/${encodeURIComponent(phone)}/link`)
    await page.getByRole('heading', { name: 'Connected' }).waitFor({ timeout: 15_000 })
    await shot(page, 'connect-page-connected.png')
    await page.close()
  })

  it('shows the pairing code split for reading, with how to type it on the phone', async () => {
    const page = await suite.device.context.newPage()
    await page.goto(await connectUrl({ phone_number: '+15559990002', link_method: 'pairing_code' }))
    const code = page.locator('#code')
    await code.waitFor({ state: 'visible', timeout: 15_000 })
    expect(await code.textContent()).toMatch(/^[1-9A-HJ-NP-Z]{4}-[1-9A-HJ-NP-Z]{4}$/)
    expect(await page.textContent('body')).toContain('Link with phone number instead')
    await shot(page, 'connect-page-pairing-code.png')
    await page.close()
  })

  it('says the link expired for a tampered token', async () => {
    const page = await suite.device.context.newPage()
    const url = await connectUrl({ phone_number: '+15559990003' })
    const res = await page.goto(url.replace(/.{4}$/, '0000'))
    expect(res?.status()).toBe(403)
    expect(await page.textContent('h1')).toBe('Link not valid')
    await page.close()
  })
})
