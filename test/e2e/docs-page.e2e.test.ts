/**
 * GET /docs in headless Chromium against the real local server (wrangler dev): Scalar's API reference loads from the
 * Worker's static assets under a strict Content-Security-Policy (scripts from this origin only, nothing inline, no
 * request to another host), reads /v1/openapi.json, and a try-it call with an API key typed into the page reaches the
 * gateway and shows its answer. With UPDATE_SCREENSHOTS=1 the screenshots go to docs/screenshots/api-reference*.png.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { localSuite } from './local-suite'
import { openPhoneBrowser, type PhoneBrowser } from './phone-browser'

const local = localSuite()
let browser: PhoneBrowser

beforeAll(async () => {
  browser = await openPhoneBrowser('api-reference', { desktop: true })
})
afterAll(async () => {
  await browser?.close()
})

async function shot(page: Page, name: string): Promise<void> {
  const file = join(browser.shotsDir, name)
  await page.screenshot({ path: file })
  expect(readFileSync(file).subarray(1, 4).toString()).toBe('PNG')
}

/** A page that records what it asked for and what it complained about. */
async function openDocs(): Promise<{ page: Page; hosts: Set<string>; problems: string[] }> {
  const page = await browser.context.newPage()
  const hosts = new Set<string>()
  const problems: string[] = []
  page.on('request', (r) => {
    if (!r.url().startsWith('data:') && !r.url().startsWith('blob:')) hosts.add(new URL(r.url()).host)
  })
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content.Security.Policy|Refused to/i.test(m.text())) problems.push(m.text())
  })
  const res = await page.goto(`${local.server.url}/docs`)
  expect(res?.status()).toBe(200)
  const csp = res?.headers()['content-security-policy'] ?? ''
  expect(csp).toContain("script-src 'self'")
  expect(csp).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/)
  return { page, hosts, problems }
}

describe('GET /docs in a browser', () => {
  it('shows the reference from this origin only, under its policy, with every resource group', async () => {
    const { page, hosts, problems } = await openDocs()
    await page.getByText('Messaging Gateway API').first().waitFor({ timeout: 30_000 })
    for (const group of ['Messages', 'Webhooks', 'Custom channel']) await page.getByRole('button', { name: `Open Group - ${group}` }).waitFor()
    await page.getByText('Bearer Token').first().waitFor()
    await shot(page, 'api-reference.png')
    expect([...hosts]).toEqual([new URL(local.server.url).host])
    expect(problems).toEqual([])
    await page.close()
  })

  it('sends a try-it request with the key typed into the page and shows the gateway’s answer', async () => {
    const { key } = await local.server.newTenant()
    const { page, hosts, problems } = await openDocs()
    await page.getByPlaceholder('Token').first().fill(key)
    // Scalar draws an operation only once it comes within 1200 px of the viewport (its Lazy component), so whether
    // /usage is drawn without scrolling depends on how tall what is above it turned out. Choosing it in the sidebar,
    // as a reader does, draws it and scrolls to it.
    await page.getByRole('link', { name: /^Get usage/ }).click()
    await page.getByRole('button', { name: /Test Request.*get \/usage/ }).click()
    const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/usage' && r.request().method() === 'GET')
    await page.getByRole('button', { name: /^Send/ }).first().click()
    const res = await answered
    expect(res.status()).toBe(200)
    expect(res.request().headers().authorization).toBe(`Bearer ${key}`)
    expect(await res.json()).toMatchObject({ plan: expect.any(String), sends: 0 })
    await page.getByText('200 OK').first().waitFor()
    await shot(page, 'api-reference-try-it.png')
    expect([...hosts]).toEqual([new URL(local.server.url).host])
    expect(problems).toEqual([])
    await page.close()
  })
})
