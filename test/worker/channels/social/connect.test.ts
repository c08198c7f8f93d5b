// The page inbox's connect flow through the real routes and the fake Graph API: the app, the link, the OAuth state
// check, the pages, the page choice, the state, removal, and the MCP tools that map to them.
import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { socialFlows } from '../../../../schema/d1'
import { body, call, newTenant } from '../../helpers'
import { callTool } from '../../mcp/rpc'
import { db, eventsOf } from '../../state'
import {
  callback,
  CONFIG_ID,
  connectPage,
  dialogUrlOf,
  loadPages,
  PAGE_A,
  PAGE_B,
  PAGE_C,
  passDialog,
  SECRET,
  selectPage,
  socialStatus,
  startConnect,
  tenantWithApp,
} from './social-helpers'

describe('PUT /v1/channels/meta/app (set_social_app)', () => {
  it('saves the app and answers the redirect URI, the callback URL and its verify token, never the secret', async () => {
    const { app, appId } = await tenantWithApp()
    expect(app).toEqual({
      success: true,
      app_id: appId,
      configuration_id: CONFIG_ID,
      app_secret_set: true,
      redirect_uri: 'https://gateway.test/v1/channels/meta/oauth/callback',
      callback_url: expect.stringMatching(/^https:\/\/gateway\.test\/v1\/channels\/meta\/webhooks\/[A-Za-z0-9]{24}$/),
      verify_token: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
    })
    expect(JSON.stringify(app)).not.toContain(SECRET)
  })

  it('keeps the callback URL and verify token when the app is saved again (they are pasted already)', async () => {
    const { t, app } = await tenantWithApp()
    const again = await body(
      await call('/v1/channels/meta/app', { method: 'PUT', key: t.key, json: { app_id: '42', app_secret: 'another-secret', config_id: '43' } })
    )
    expect(again).toMatchObject({ app_id: '42', configuration_id: '43', callback_url: app.callback_url, verify_token: app.verify_token })
  })

  it('refuses a body without a configuration id, a non-numeric app id, and a call without key', async () => {
    const t = await newTenant()
    const missing = await call('/v1/channels/meta/app', { method: 'PUT', key: t.key, json: { app_id: '1', app_secret: 'secret-secret' } })
    expect(missing.status).toBe(400)
    expect(await body(missing)).toMatchObject({ success: false, error: expect.stringContaining('configuration_id'), error_code: 400 })
    const wrong = await call('/v1/channels/meta/app', {
      method: 'PUT',
      key: t.key,
      json: { app_id: 'abc', app_secret: 'secret-secret', configuration_id: '1' },
    })
    expect(wrong.status).toBe(400)
    expect((await call('/v1/channels/meta/app', { method: 'PUT', json: { app_id: '1', app_secret: 'secret-secret', configuration_id: '1' } })).status).toBe(401)
  })
})

describe('POST /v1/channels/meta/connect (connect_social_inbox)', () => {
  it('answers 409 social_app_required without a saved app', async () => {
    const t = await newTenant()
    const r = await startConnect(t)
    expect(r.status).toBe(409)
    expect(r.body).toEqual({ success: false, error: expect.stringContaining('social_app_required'), error_code: 409 })
  })

  it('answers a short-lived link to a page of the service that leads to the permission screen of the app', async () => {
    const { t, appId, app } = await tenantWithApp()
    const before = Date.now()
    const r = await startConnect(t)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      success: true,
      status: 'pending',
      connect_url: expect.stringMatching(/^https:\/\/gateway\.test\/v1\/channels\/meta\/connect\/page\?token=/),
    })
    expect(r.body.connect_url_expires_at).toBeGreaterThan(before)
    expect(r.body.connect_url_expires_at).toBeLessThanOrEqual(Date.now() + 10 * 60_000)
    const dialog = new URL(await dialogUrlOf(r.body.connect_url))
    expect(dialog.pathname).toBe('/v25.0/dialog/oauth')
    expect(Object.fromEntries(dialog.searchParams)).toEqual({
      client_id: appId,
      redirect_uri: app.redirect_uri,
      state: expect.any(String),
      config_id: CONFIG_ID,
      response_type: 'code',
    })
    expect(await socialStatus(t)).toMatchObject({ status: 'pending', expires_at: r.body.connect_url_expires_at })
  })

  it('takes the call without any body too', async () => {
    const { t } = await tenantWithApp()
    const res = await call('/v1/channels/meta/connect', { method: 'POST', key: t.key })
    expect(res.status).toBe(200)
    expect(await body(res)).toMatchObject({ status: 'pending' })
  })

  it('takes an empty body sent as JSON as no body', async () => {
    const { t } = await tenantWithApp()
    const res = await call('/v1/channels/meta/connect', { method: 'POST', key: t.key, headers: { 'Content-Type': 'application/json' } })
    expect(res.status).toBe(200)
    expect(await body(res)).toMatchObject({ status: 'pending' })
  })

  it('refuses a tampered link', async () => {
    const { t } = await tenantWithApp()
    const r = await startConnect(t)
    const res = await call(new URL(r.body.connect_url).pathname + new URL(r.body.connect_url).search.replace(/.$/, (ch) => (ch === 'a' ? 'b' : 'a')))
    expect(res.status).toBe(403)
  })
})

describe('GET /v1/channels/meta/oauth/callback', () => {
  it('exchanges the code for a long-lived token and loads the pages (pages_loaded)', async () => {
    const { t, graph } = await tenantWithApp([PAGE_A, PAGE_B])
    await loadPages(t)
    expect(await socialStatus(t)).toMatchObject({ status: 'pages_loaded', reason: null, account_id: null })
    // Pages were read with the long-lived token, after both exchanges.
    expect(await graph.requests()).toEqual(['GET oauth/access_token code', 'GET oauth/access_token fb_exchange_token', 'GET me/accounts user_long'])
  })

  it('refuses a forged state and stores nothing', async () => {
    const { t } = await tenantWithApp()
    await startConnect(t)
    const r = await callback('https://gateway.test/v1/channels/meta/oauth/callback?code=AQxyz&state=forged-state-value')
    expect(r.status).toBe(403)
    expect(await socialStatus(t)).toMatchObject({ status: 'pending' })
  })

  it('refuses a state used once already (single use)', async () => {
    const { t } = await tenantWithApp()
    const back = await loadPages(t)
    const again = await callback(back)
    expect(again.status).toBe(409)
    expect(await socialStatus(t)).toMatchObject({ status: 'pages_loaded' })
  })

  it('refuses a flow whose link lapsed, and the state reads expired', async () => {
    const { t } = await tenantWithApp()
    const started = await startConnect(t)
    const back = await passDialog(await dialogUrlOf(started.body.connect_url))
    await db
      .update(socialFlows)
      .set({ expiresAt: Date.now() - 1 })
      .where(eq(socialFlows.tenantId, t.tenantId))
    const r = await callback(back)
    expect(r.status).toBe(410)
    expect(await socialStatus(t)).toMatchObject({ status: 'expired' })
    // The spent-or-lapsed state is worth nothing afterwards either.
    expect((await call('/v1/channels/meta/pages', { key: t.key })).status).toBe(409)
  })

  it('records a refusal on the permission screen as failed with its reason', async () => {
    const { t, graph } = await tenantWithApp()
    await graph.nextLogin({ deny: true })
    const started = await startConnect(t)
    const r = await callback(await passDialog(await dialogUrlOf(started.body.connect_url)))
    expect(r.status).toBe(400)
    expect(await socialStatus(t)).toMatchObject({ status: 'failed', reason: 'permission_denied' })
  })

  it('shows the used link as used, not as a second way in', async () => {
    const { t } = await tenantWithApp()
    const started = await startConnect(t)
    await callback(await passDialog(await dialogUrlOf(started.body.connect_url)))
    const res = await call(new URL(started.body.connect_url).pathname + new URL(started.body.connect_url).search)
    expect(res.status).toBe(409)
  })
})

describe('GET /v1/channels/meta/pages and POST /v1/channels/meta/pages/select', () => {
  it('lists every granted page with its linked account (or none), and whether it can message', async () => {
    const { t } = await tenantWithApp([PAGE_A, PAGE_B, PAGE_C])
    await loadPages(t)
    const pages = await body(await call('/v1/channels/meta/pages', { key: t.key }))
    expect(pages).toEqual({
      success: true,
      pages: [
        { id: '1001', name: 'Corner Bakery', instagram: { id: '17841400000001', username: 'cornerbakery' }, can_message: true },
        { id: '1002', name: 'Bakery Events', instagram: null, can_message: true },
        { id: '1003', name: 'Read-only Page', instagram: null, can_message: false },
      ],
    })
  })

  it('answers 409 pages_not_loaded before the permission step', async () => {
    const { t } = await tenantWithApp()
    const res = await call('/v1/channels/meta/pages', { key: t.key })
    expect(res.status).toBe(409)
    expect(await body(res)).toMatchObject({ error: expect.stringContaining('pages_not_loaded'), error_code: 409 })
  })

  it('connects the chosen page with its linked account: one social account, subscribed, account.connected', async () => {
    const { t, graph } = await tenantWithApp([PAGE_B, PAGE_A])
    await loadPages(t)
    const r = await selectPage(t, PAGE_A.id)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      status: 'connected',
      account_id: '1001',
      page: { id: '1001', name: 'Corner Bakery' },
      instagram: { id: '17841400000001', username: 'cornerbakery' },
      connected_at: expect.stringMatching(/Z$/),
    })
    expect(Object.keys(await graph.subscriptions())).toEqual(['1001'])
    expect((await graph.subscriptions())['1001']).toEqual(expect.arrayContaining(['messages', 'message_deliveries', 'message_reads', 'message_echoes']))
    const accounts = await body<{ accounts: unknown[] }>(await call('/v1/accounts', { key: t.key }))
    expect(accounts.accounts).toMatchObject([{ id: '1001', channel: 'social', identifier: 'Corner Bakery', status: 'connected' }])
    const usage = await body(await call('/v1/usage', { key: t.key }))
    expect(usage).toMatchObject({ accounts_total: 1, accounts_connected: 1 })
    expect((await eventsOf(t.tenantId, 'account.connected')).map((e) => e.accountId)).toEqual(['1001'])
  })

  it('connects a page without a linked account with instagram null', async () => {
    const { t } = await connectPage([PAGE_A, PAGE_B], PAGE_B.id)
    expect(await socialStatus(t)).toMatchObject({ status: 'connected', page: { id: '1002' }, instagram: null })
  })

  it('refuses a page that was not granted (404), one without messaging (422), and a second page past the cap (409)', async () => {
    const ctx = await tenantWithApp([PAGE_A, PAGE_B, PAGE_C])
    await loadPages(ctx.t)
    expect((await selectPage(ctx.t, '999')).status).toBe(404)
    expect((await selectPage(ctx.t, PAGE_C.id)).body).toMatchObject({ error: expect.stringContaining('page_not_messageable'), error_code: 422 })
    expect((await selectPage(ctx.t, PAGE_A.id)).status).toBe(200)
    await loadPages(ctx.t)
    const second = await selectPage(ctx.t, PAGE_B.id)
    expect(second.status).toBe(409)
    expect(second.body).toMatchObject({ error: expect.stringContaining('1 connected account'), error_code: 409 })
    expect(Object.keys(await ctx.graph.subscriptions())).toEqual(['1001'])
  })

  it('treats choosing the connected page again as a reconnect, not a second account', async () => {
    const ctx = await connectPage([PAGE_A])
    await loadPages(ctx.t)
    expect((await selectPage(ctx.t, PAGE_A.id)).status).toBe(200)
    expect((await eventsOf(ctx.t.tenantId, 'account.connected')).length).toBe(1)
  })
})

describe('DELETE /v1/channels/meta (disconnect_social_inbox)', () => {
  it('unsubscribes the app and removes the page and its linked account', async () => {
    const ctx = await connectPage([PAGE_A])
    const res = await call('/v1/channels/meta', { method: 'DELETE', key: ctx.t.key })
    expect(await body(res)).toEqual({ success: true, status: 'removed', removed: ['1001'] })
    expect(await ctx.graph.subscriptions()).toEqual({})
    expect(await body(await call('/v1/accounts', { key: ctx.t.key }))).toEqual({ accounts: [] })
    expect(await socialStatus(ctx.t)).toMatchObject({ status: 'not_connected', page: null, instagram: null })
    expect((await eventsOf(ctx.t.tenantId, 'account.disconnected')).map((e) => e.payload)).toMatchObject([
      { account: { id: '1001', status: 'disconnected', reason: 'removed' } },
    ])
    const again = await call('/v1/channels/meta', { method: 'DELETE', key: ctx.t.key })
    expect(await body(again)).toEqual({ success: true, status: 'not_connected', removed: [] })
  })

  it('removes locally when the provider no longer accepts the token', async () => {
    const ctx = await connectPage([PAGE_A])
    await ctx.graph.revoke()
    expect(await body(await call('/v1/channels/meta', { method: 'DELETE', key: ctx.t.key }))).toMatchObject({ status: 'removed' })
  })
})

describe('the page-inbox MCP tools', () => {
  it('run their REST operations', async () => {
    const t = await newTenant()
    expect((await callTool(t.key, 'connect_social_inbox', { body: {} })).json).toMatchObject({
      error: expect.stringContaining('social_app_required'),
      error_code: 409,
    })
    const saved = await callTool(t.key, 'set_social_app', { body: { app_id: '77', app_secret: 'secret-secret', configuration_id: '78' } })
    expect(saved.status).toBe(200)
    expect(saved.json).toMatchObject({ app_id: '77', redirect_uri: expect.any(String), callback_url: expect.any(String) })
    const connect = await callTool(t.key, 'connect_social_inbox', {})
    expect(connect.status).toBe(200)
    expect(connect.json).toMatchObject({ status: 'pending', connect_url: expect.any(String) })
    expect((await callTool(t.key, 'get_social_inbox_status')).json).toMatchObject({ status: 'pending', app_id: '77' })
    expect((await callTool(t.key, 'list_pages')).status).toBe(409)
    expect((await callTool(t.key, 'select_page', { body: { page_id: '1' } })).json).toMatchObject({ error: expect.stringContaining('pages_not_loaded') })
    expect((await callTool(t.key, 'disconnect_social_inbox')).json).toEqual({ success: true, status: 'not_connected', removed: [] })
  })

  it('list and select a page of a finished permission step', async () => {
    const ctx = await tenantWithApp([PAGE_A, PAGE_B])
    await loadPages(ctx.t)
    const pages = await callTool(ctx.t.key, 'list_pages')
    expect((pages.json.pages as { id: string }[]).map((p) => p.id)).toEqual(['1001', '1002'])
    const picked = await callTool(ctx.t.key, 'select_page', { body: { page_id: '1002' } })
    expect(picked.json).toMatchObject({ status: 'connected', account_id: '1002' })
  })
})

describe('the page-inbox OpenAPI operations', () => {
  it('carry the MCP tool names as operationIds', async () => {
    const doc = await body<{ paths: Record<string, Record<string, { operationId?: string }>> }>(await call('/v1/openapi.json'))
    const ids = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/channels/meta'))
      .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`))
    expect(ids.sort()).toEqual(
      [
        'PUT /channels/meta/app set_social_app',
        'POST /channels/meta/connect connect_social_inbox',
        'GET /channels/meta/status get_social_inbox_status',
        'GET /channels/meta/pages list_pages',
        'POST /channels/meta/pages/select select_page',
        'DELETE /channels/meta disconnect_social_inbox',
      ].sort()
    )
  })
})
