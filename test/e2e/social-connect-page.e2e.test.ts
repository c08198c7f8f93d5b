/**
 * The page inbox against the real local server (wrangler dev) and the fake Graph API (GRAPH_API_URL and
 * GRAPH_DIALOG_URL pointed at it, as `npm start` passes them through): the hosted connect page in headless Chromium
 * on a phone-sized screen, its button to the permission screen, the return to the service with the pages loaded, then
 * page selection, a signed webhook and a reply over HTTP. With UPDATE_SCREENSHOTS=1 the screenshots are written to
 * docs/screenshots/ (docs/channels/social.md shows them). Chromium comes from scripts/chromium.mjs (phone-browser.ts).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FAKE_GRAPH_VERSION, startFakeGraph, type FakeGraph } from '../fixtures/fake-graph'
import { fakeGraphApp } from '../fixtures/fake-graph-types'
import { startLocalServer, type LocalServer } from './local-server'
import { openPhoneBrowser, type PhoneBrowser } from './phone-browser'

const PAGE = { id: '3001', name: 'Harbour Café', instagram: { id: '17841400000301', username: 'harbourcafe' } }
const SECRET = 'e2e-app-secret-123'

let server: LocalServer
let graph: FakeGraph
let device: PhoneBrowser

beforeAll(async () => {
  graph = await startFakeGraph()
  server = await startLocalServer({ vars: { GRAPH_API_URL: graph.url, GRAPH_DIALOG_URL: graph.url, GRAPH_API_VERSION: FAKE_GRAPH_VERSION } })
  device = await openPhoneBrowser('social')
  // wrangler dev and Chromium start together: on a shared 2-core machine that can take minutes.
}, 300_000)
afterAll(async () => {
  await device?.close()
  await Promise.all([server?.stop(), graph?.close()])
})

async function shot(page: Page, name: string): Promise<void> {
  const file = join(device.shotsDir, name)
  await page.screenshot({ path: file, fullPage: true })
  expect(readFileSync(file).subarray(1, 4).toString()).toBe('PNG')
}

describe('the page-inbox connect page on a phone screen', () => {
  it('leads to the permission screen and back with the pages loaded; then a page is picked and a person answered', async () => {
    const { key } = await server.newTenant()
    const appId = `9${Date.now()}`
    const app = fakeGraphApp(graph.url, appId)
    await app.register(SECRET, '4242', [PAGE, { id: '3002', name: 'Harbour Events' }])
    const saved = await server.api<{ callback_url: string; verify_token: string; redirect_uri: string }>(key, 'PUT', '/channels/meta/app', {
      app_id: appId,
      app_secret: SECRET,
      configuration_id: '4242',
    })
    expect(saved.status).toBe(200)
    expect(saved.json.redirect_uri).toBe(`${server.url}/v1/channels/meta/oauth/callback`)
    const connect = await server.api<{ connect_url: string }>(key, 'POST', '/channels/meta/connect', {})
    expect(connect.status).toBe(200)

    const page = await device.context.newPage()
    await page.goto(connect.json.connect_url)
    const button = page.locator('#continue')
    await button.waitFor({ state: 'visible' })
    const box = await button.boundingBox()
    expect(box!.x + box!.width).toBeLessThanOrEqual(390)
    expect(await page.locator('#steps').textContent()).toContain(`App ID ${appId}`)
    await shot(page, 'social-connect-page.png')

    await button.click()
    await page.locator('#done').waitFor({ state: 'visible', timeout: 15_000 })
    expect(new URL(page.url()).pathname).toBe('/v1/channels/meta/oauth/callback')
    expect(await page.locator('#done').textContent()).toContain('2 pages loaded')
    await shot(page, 'social-connect-done.png')

    // The same link a second time: used, not a way back in.
    await page.goto(connect.json.connect_url)
    await page.locator('#error').waitFor({ state: 'visible' })
    expect(await page.locator('#error').textContent()).toContain('already used')
    await shot(page, 'social-connect-used.png')
    await page.close()

    expect((await server.api(key, 'GET', '/channels/meta/status')).json).toMatchObject({ status: 'pages_loaded' })
    const pages = await server.api<{ pages: { id: string }[] }>(key, 'GET', '/channels/meta/pages')
    expect(pages.json.pages.map((p) => p.id)).toEqual(['3001', '3002'])
    expect((await server.api(key, 'POST', '/channels/meta/pages/select', { page_id: '3001' })).json).toMatchObject({
      status: 'connected',
      instagram: { username: 'harbourcafe' },
    })

    // Graph's handshake and a signed message, over real HTTP.
    const hookUrl = saved.json.callback_url
    const challenge = await fetch(`${hookUrl}?hub.mode=subscribe&hub.verify_token=${saved.json.verify_token}&hub.challenge=77`)
    expect(await challenge.text()).toBe('77')
    const hook = await app.webhook({
      kind: 'message',
      surface: 'instagram',
      owner_id: PAGE.instagram.id,
      sender_id: '555',
      sender_name: 'Mia',
      text: 'Open on Sunday?',
    })
    const posted = await fetch(hookUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Hub-Signature-256': hook.signature },
      body: hook.body,
    })
    expect(posted.status).toBe(200)
    const reply = await server.api<{ message_id: string }>(key, 'POST', '/messages', { to: { social_id: '555' }, text: 'Yes, 9 to 3' })
    expect(reply.status).toBe(202)
    await expect
      .poll(async () => (await server.api<{ status: string }>(key, 'GET', `/messages/${reply.json.message_id}`)).json.status, { timeout: 10_000 })
      .toBe('sent')
    expect((await app.sent()).map((s) => [s.surface, s.recipient_id, s.text])).toEqual([['instagram', '555', 'Yes, 9 to 3']])
  })

  it('explains a link that is not valid', async () => {
    const page = await device.context.newPage()
    await page.goto(`${server.url}/v1/channels/meta/connect/page?token=not-a-token`)
    await page.locator('#error').waitFor({ state: 'visible' })
    expect(await page.locator('h1').textContent()).toBe('Link not valid')
    await shot(page, 'social-connect-invalid.png')
    await page.close()
  })
})
