/** Helpers for the page-inbox tests: an app on the fake Graph API, the connect flow through the real routes, webhooks. */
import { inject } from 'vitest'
import { fakeGraphApp, type FakeEvent, type FakeGraphPage } from '../../../fixtures/fake-graph-types'
import { body, call, newTenant, type TestTenant } from '../../helpers'

let seq = 0

export const SECRET = 'app-secret-0123456789'
export const CONFIG_ID = '555000111'

export function newAppId(): string {
  return `${Date.now() % 1_000_000_000}${String(seq++).padStart(4, '0')}`
}

export const PAGE_A: FakeGraphPage = { id: '1001', name: 'Corner Bakery', instagram: { id: '17841400000001', username: 'cornerbakery' } }
export const PAGE_B: FakeGraphPage = { id: '1002', name: 'Bakery Events' }
export const PAGE_C: FakeGraphPage = { id: '1003', name: 'Read-only Page', tasks: ['ANALYZE'] }

export type SocialApp = { redirect_uri: string; callback_url: string; verify_token: string; app_id: string; configuration_id: string }

/** A tenant with its own app saved, and that app registered on the fake Graph API with the pages its login grants. */
export async function tenantWithApp(pages: FakeGraphPage[] = [PAGE_A]) {
  const t = await newTenant()
  const appId = newAppId()
  const graph = fakeGraphApp(inject('fakeGraphUrl'), appId)
  await graph.register(SECRET, CONFIG_ID, pages)
  const res = await call('/v1/channels/meta/app', { method: 'PUT', key: t.key, json: { app_id: appId, app_secret: SECRET, configuration_id: CONFIG_ID } })
  if (res.status !== 200) throw new Error(`set app: ${res.status} ${await res.text()}`)
  const app = await body<SocialApp>(res)
  return { t, appId, graph, app, webhookPath: new URL(app.callback_url).pathname }
}

export async function startConnect(t: TestTenant) {
  const res = await call('/v1/channels/meta/connect', { method: 'POST', key: t.key, json: {} })
  return { status: res.status, body: await body<{ connect_url: string; connect_url_expires_at: number; status: string }>(res) }
}

/** The hosted page's link to the permission screen. */
export async function dialogUrlOf(connectUrl: string): Promise<string> {
  const res = await call(new URL(connectUrl).pathname + new URL(connectUrl).search)
  const html = await res.text()
  const href = /id="continue" href="([^"]+)"/.exec(html)?.[1]
  if (res.status !== 200 || !href) throw new Error(`connect page: ${res.status} ${html.slice(0, 200)}`)
  return href.replaceAll('&amp;', '&')
}

/** Follows the permission screen (the fake's dialog) and answers where it sends the browser back to. */
export async function passDialog(dialogUrl: string): Promise<string> {
  const res = await fetch(dialogUrl, { redirect: 'manual' })
  const location = res.headers.get('Location')
  if (res.status !== 302 || !location) throw new Error(`dialog: ${res.status} ${await res.text()}`)
  return location
}

/** The browser arriving back at the service from the permission screen. */
export async function callback(location: string) {
  const u = new URL(location)
  const res = await call(u.pathname + u.search)
  return { status: res.status, html: await res.text() }
}

/** Connect → hosted page → permission screen → callback: the flow ends `pages_loaded`. */
export async function loadPages(t: TestTenant) {
  const started = await startConnect(t)
  const back = await passDialog(await dialogUrlOf(started.body.connect_url))
  const answer = await callback(back)
  if (answer.status !== 200) throw new Error(`callback: ${answer.status} ${answer.html}`)
  return back
}

export async function selectPage(t: TestTenant, pageId: string) {
  const res = await call('/v1/channels/meta/pages/select', { method: 'POST', key: t.key, json: { page_id: pageId } })
  return { status: res.status, body: await body(res) }
}

export async function connectPage(pages: FakeGraphPage[] = [PAGE_A], pick = pages[0]!.id) {
  const ctx = await tenantWithApp(pages)
  await loadPages(ctx.t)
  const selected = await selectPage(ctx.t, pick)
  if (selected.status !== 200) throw new Error(`select: ${selected.status} ${JSON.stringify(selected.body)}`)
  return ctx
}

export async function socialStatus(t: TestTenant) {
  return body(await call('/v1/channels/meta/status', { key: t.key }))
}

/** Has the fake Graph API build and sign a delivery, and POSTs it to the app's callback URL. */
export async function deliverWebhook(ctx: { graph: ReturnType<typeof fakeGraphApp>; webhookPath: string }, event: FakeEvent) {
  const hook = await ctx.graph.webhook(event)
  return postWebhook(ctx.webhookPath, hook.body, hook.signature)
}

export async function postWebhook(path: string, raw: string, signature: string | null) {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' }
  if (signature !== null) headers['X-Hub-Signature-256'] = signature
  const res = await call(path, { method: 'POST', headers, body: raw })
  return { status: res.status, body: await body(res) }
}
