/** /v1/webhooks: the event list and subscription CRUD, addressing by position and name, and every error status. */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { EVENT_TYPES, EXTENSION_EVENT_TYPES } from '../../../schema/events'
import { admin, call, newTenant, receiverChannel } from '../helpers'
import { setClock } from '../state'
import { api, createWebhook, type WireWebhook } from '../webhook-helpers'

const URL_A = 'https://hooks.example.com/a'
const URL_B = 'https://hooks.example.com/b'

afterEach(() => {
  vi.useRealTimers()
})

describe('GET /v1/webhooks/events', () => {
  it('lists the nine events with a description each', async () => {
    const t = await newTenant()
    type EventList = {
      success: boolean
      events: string[]
      descriptions: Record<string, string>
      extension_events: string[]
      extension_descriptions: Record<string, string>
    }
    const res = await api<EventList>(t, 'GET', '/webhooks/events')
    expect(res.status).toBe(200)
    expect(res.body.success).toBe(true)
    expect(res.body.events).toEqual([...EVENT_TYPES])
    expect(res.body.events).toHaveLength(9)
    // `descriptions` keys exactly `events`; the extensions have their own list and descriptions.
    expect(Object.keys(res.body.descriptions)).toEqual([...EVENT_TYPES])
    for (const e of EVENT_TYPES) expect(res.body.descriptions[e]).toMatch(/\w+/)
    expect(res.body.extension_events).toEqual([...EXTENSION_EVENT_TYPES])
    expect(Object.keys(res.body.extension_descriptions)).toEqual([...EXTENSION_EVENT_TYPES])
    // Each opens with the meaning spec part 6 gives it; anything after adds to it.
    const meanings: Record<(typeof EVENT_TYPES)[number], string> = {
      'message.received': 'A contact sent a message to a connected account',
      'message.sent': 'A sent message left the account',
      'message.delivered': "A sent message reached the contact's phone",
      'message.read': 'The contact read a sent message',
      'message.failed': 'A sent message could not be delivered',
      'account.connected': 'An account finished connecting',
      'account.disconnected': 'An account logged out or lost its session',
      'account.restricted': 'The channel or the safety limits stopped an account from sending',
      'account.limit_reached': 'A daily plan limit was hit; fires the first time it is hit',
    }
    for (const e of EVENT_TYPES) expect(res.body.descriptions[e]!.startsWith(meanings[e]), e).toBe(true)
  })
})

describe('auth and the webhooks switch', () => {
  it('answers 401 with error_code 401 without a key or with a wrong one', async () => {
    for (const res of [await call('/v1/webhooks'), await call('/v1/webhooks', { key: 'svc_live_nope' })]) {
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual({ success: false, error: expect.any(String), error_code: 401 })
    }
  })

  it('answers 403 on every webhook endpoint when webhooks are not enabled for the account', async () => {
    const t = await newTenant()
    await createWebhook(t, { url: URL_A, subscribed_to: ['message.received'], name: 'a' })
    await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { webhooks_enabled: false } })
    const paths: Array<[string, string]> = [
      ['GET', '/webhooks/events'],
      ['GET', '/webhooks'],
      ['POST', '/webhooks'],
      ['PUT', '/webhooks/a'],
      ['DELETE', '/webhooks/a'],
      ['POST', '/webhooks/a/test'],
      ['GET', '/webhooks/a/health'],
      ['POST', '/webhooks/a/reenable'],
      ['GET', '/webhooks/a/signing-secret'],
      ['POST', '/webhooks/a/signing-secret'],
      ['DELETE', '/webhooks/a/signing-secret'],
      ['GET', '/webhooks/a/deliveries'],
      ['POST', '/webhooks/a/replay'],
    ]
    for (const [method, path] of paths) {
      const res = await api(t, method, path, method === 'GET' || method === 'DELETE' ? undefined : {})
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.body).toEqual({ success: false, error: 'Webhooks are not enabled for this account', error_code: 403 })
    }
  })
})

describe('POST /v1/webhooks', () => {
  it('creates a subscription with the spec defaults and a timestamped name', async () => {
    const t = await newTenant()
    const res = await api<{ success: boolean; webhook: WireWebhook; signing_secret: string | null }>(t, 'POST', '/webhooks', {
      url: URL_A,
      subscribed_to: ['message.received', 'account.connected'],
    })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      success: true,
      signing_secret: null,
      webhook: {
        id: '0',
        name: expect.stringMatching(/^webhook-\d{8}-\d{6}$/),
        url: URL_A,
        subscribed_to: ['message.received', 'account.connected'],
        created_at: expect.any(String),
        enabled: true,
        retries_enabled: false,
        signing_enabled: false,
        signing_secret_created_at: null,
      },
    })
  })

  it('trims the URL it stores', async () => {
    const t = await newTenant()
    const created = await createWebhook(t, { url: `  ${URL_A} `, subscribed_to: ['message.received'] })
    expect(created.webhook.url).toBe(URL_A)
  })

  it('returns the signing secret once with generate_signing_secret and never in the subscription', async () => {
    const t = await newTenant()
    const created = await createWebhook(t, { url: URL_A, subscribed_to: ['message.sent'], name: 'signed', generate_signing_secret: true })
    expect(created.signing_secret).toMatch(/^whsec_[0-9A-Za-z]{43}$/)
    expect(created.webhook.signing_enabled).toBe(true)
    expect(created.webhook.signing_secret_created_at).toEqual(expect.any(String))
    const list = await api<{ webhooks: WireWebhook[] }>(t, 'GET', '/webhooks')
    expect(JSON.stringify(list.body)).not.toContain(created.signing_secret!)
    expect(JSON.stringify(list.body)).not.toContain('signing_secret"')
  })

  it('stores the signing secret encrypted, not in clear', async () => {
    const t = await newTenant()
    const created = await createWebhook(t, { url: URL_A, subscribed_to: ['message.sent'], name: 'sealed', generate_signing_secret: true })
    const { env } = await import('cloudflare:workers')
    const row = await env.DB.prepare('SELECT signing_secret FROM webhooks WHERE tenant_id = ?').bind(t.tenantId).first<{ signing_secret: string }>()
    expect(row?.signing_secret).toMatch(/^v2\.default\./)
    expect(row?.signing_secret).not.toContain(created.signing_secret!.slice(6))
  })

  it('refuses an unknown event, an empty event list and a missing url with 400', async () => {
    const t = await newTenant()
    for (const json of [
      { url: URL_A, subscribed_to: ['message.received', 'message.exploded'] },
      { url: URL_A, subscribed_to: [] },
      { url: URL_A },
      { subscribed_to: ['message.received'] },
    ]) {
      const res = await api(t, 'POST', '/webhooks', json)
      expect(res.status, JSON.stringify(json)).toBe(400)
      expect(res.body).toEqual({ success: false, error: expect.any(String), error_code: 400 })
    }
    const unknown = await api<{ error: string }>(t, 'POST', '/webhooks', { url: URL_A, subscribed_to: ['message.exploded'] })
    expect(unknown.body.error).toContain("unknown event 'message.exploded'")
  })

  it('refuses URLs that are not public https with 400 (the shared SSRF guard)', async () => {
    const t = await newTenant()
    for (const url of [
      'http://hooks.example.com/x',
      'https://10.0.0.1/x',
      'https://169.254.169.254/latest',
      'https://intranet/x',
      'https://gateway.test/v1/x',
      'ftp://x.example.com',
      'not a url',
    ]) {
      const res = await api<{ error: string }>(t, 'POST', '/webhooks', { url, subscribed_to: ['message.received'] })
      expect(res.status, url).toBe(400)
      expect(res.body.error).toContain('url is not allowed')
    }
  })

  it('accepts a loopback URL only because the test environment allows it (dev-only ALLOW_LOOPBACK_URLS)', async () => {
    const t = await newTenant()
    const res = await api(t, 'POST', '/webhooks', { url: receiverChannel().url, subscribed_to: ['message.received'] })
    expect(res.status).toBe(201)
  })

  it('refuses a duplicate name, an all-digit name and the reserved name events', async () => {
    const t = await newTenant()
    await createWebhook(t, { url: URL_A, subscribed_to: ['message.received'], name: 'crm' })
    const dup = await api(t, 'POST', '/webhooks', { url: URL_B, subscribed_to: ['message.received'], name: 'crm' })
    expect(dup.status).toBe(409)
    expect(dup.body).toEqual({ success: false, error: "A subscription named 'crm' already exists", error_code: 409 })
    expect((await api(t, 'POST', '/webhooks', { url: URL_B, subscribed_to: ['message.received'], name: '42' })).status).toBe(400)
    expect((await api(t, 'POST', '/webhooks', { url: URL_B, subscribed_to: ['message.received'], name: 'events' })).status).toBe(400)
  })

  it('gives subscriptions created at the same moment distinct default names', async () => {
    const t = await newTenant()
    const made = await Promise.all([URL_A, URL_B, `${URL_A}/c`].map((url) => createWebhook(t, { url, subscribed_to: ['message.received'] })))
    expect(new Set(made.map((m) => m.webhook.name)).size).toBe(3)
  })

  it('caps subscriptions at 20 per account with 409', async () => {
    const t = await newTenant()
    for (let i = 0; i < 20; i++) await createWebhook(t, { url: `${URL_A}/${i}`, subscribed_to: ['message.received'], name: `w${i}` })
    const res = await api(t, 'POST', '/webhooks', { url: URL_B, subscribed_to: ['message.received'] })
    expect(res.status).toBe(409)
  })
})

describe('GET /v1/webhooks and addressing', () => {
  it('lists in creation order with positional ids that shift after a deletion; names stay', async () => {
    const t = await newTenant()
    for (const name of ['first', 'second', 'third']) await createWebhook(t, { url: URL_A, subscribed_to: ['message.received'], name })
    const before = await api<{ webhooks: WireWebhook[] }>(t, 'GET', '/webhooks')
    expect(before.body.webhooks.map((w) => [w.id, w.name])).toEqual([
      ['0', 'first'],
      ['1', 'second'],
      ['2', 'third'],
    ])
    expect((await api(t, 'DELETE', '/webhooks/0')).status).toBe(200)
    const after = await api<{ webhooks: WireWebhook[] }>(t, 'GET', '/webhooks')
    expect(after.body.webhooks.map((w) => [w.id, w.name])).toEqual([
      ['0', 'second'],
      ['1', 'third'],
    ])
    const byName = await api<{ webhook: WireWebhook }>(t, 'GET', '/webhooks/third')
    expect(byName.body.webhook.id).toBe('1')
  })

  it('keeps creation order among subscriptions created in the same millisecond', async () => {
    // Positional ids follow creation, not the random internal ids: with the clock stopped every row has one created_at.
    setClock('2030-05-01T10:00:00.000Z')
    const t = await newTenant()
    const names = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8']
    for (const name of names) await createWebhook(t, { url: URL_A, subscribed_to: ['message.received'], name })
    const list = await api<{ webhooks: WireWebhook[] }>(t, 'GET', '/webhooks')
    expect(list.body.webhooks.map((w) => w.name)).toEqual(names)
    expect(new Set(list.body.webhooks.map((w) => w.created_at)).size).toBe(1)
    expect((await api<{ webhook: WireWebhook }>(t, 'GET', '/webhooks/0')).body.webhook.name).toBe('a1')
  })

  it('does not show another tenant’s subscriptions and answers 404 for them', async () => {
    const a = await newTenant()
    const b = await newTenant()
    await createWebhook(a, { url: URL_A, subscribed_to: ['message.received'], name: 'mine' })
    expect((await api<{ webhooks: unknown[] }>(b, 'GET', '/webhooks')).body.webhooks).toEqual([])
    for (const id of ['mine', '0']) {
      const res = await api(b, 'GET', `/webhooks/${id}`)
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ success: false, error: expect.any(String), error_code: 404 })
    }
  })

  it('answers 404 for an unknown id or name on every per-subscription route', async () => {
    const t = await newTenant()
    for (const [method, path, json] of [
      ['PUT', '/webhooks/nope', { name: 'x' }],
      ['DELETE', '/webhooks/7', undefined],
      ['POST', '/webhooks/nope/test', {}],
      ['GET', '/webhooks/nope/health', undefined],
      ['POST', '/webhooks/nope/reenable', undefined],
      ['GET', '/webhooks/nope/signing-secret', undefined],
      ['GET', '/webhooks/nope/deliveries', undefined],
      ['POST', '/webhooks/nope/replay', { since: new Date().toISOString() }],
    ] as const) {
      const res = await api(t, method, path, json)
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(res.body).toEqual({ success: false, error: expect.any(String), error_code: 404 })
    }
  })
})

describe('PUT /v1/webhooks/{webhookId}', () => {
  it('changes only the given fields', async () => {
    const t = await newTenant()
    const created = await createWebhook(t, { url: URL_A, subscribed_to: ['message.received'], name: 'crm', retries_enabled: true })
    const res = await api<{ success: boolean; webhook: WireWebhook }>(t, 'PUT', '/webhooks/crm', {
      subscribed_to: ['message.sent', 'message.failed'],
      enabled: false,
    })
    expect(res.status).toBe(200)
    expect(res.body.webhook).toEqual({ ...created.webhook, subscribed_to: ['message.sent', 'message.failed'], enabled: false })
  })

  it('renames, after which the new name addresses it', async () => {
    const t = await newTenant()
    await createWebhook(t, { url: URL_A, subscribed_to: ['message.received'], name: 'old' })
    const res = await api<{ webhook: WireWebhook }>(t, 'PUT', '/webhooks/old', { name: 'new' })
    expect(res.body.webhook.name).toBe('new')
    expect((await api(t, 'GET', '/webhooks/new')).status).toBe(200)
    expect((await api(t, 'GET', '/webhooks/old')).status).toBe(404)
  })

  it('needs one of url, subscribed_to or name, and refuses unknown events, bad URLs and taken names', async () => {
    const t = await newTenant()
    await createWebhook(t, { url: URL_A, subscribed_to: ['message.received'], name: 'one' })
    await createWebhook(t, { url: URL_B, subscribed_to: ['message.received'], name: 'two' })
    expect((await api(t, 'PUT', '/webhooks/one', { enabled: false })).status).toBe(400)
    expect((await api(t, 'PUT', '/webhooks/one', { subscribed_to: ['nope'] })).status).toBe(400)
    expect((await api(t, 'PUT', '/webhooks/one', { url: 'http://plain.example.com' })).status).toBe(400)
    expect((await api(t, 'PUT', '/webhooks/one', { name: 'two' })).status).toBe(409)
  })
})

describe('DELETE /v1/webhooks/{webhookId}', () => {
  it('removes the subscription and says which one it was', async () => {
    const t = await newTenant()
    await createWebhook(t, { url: URL_A, subscribed_to: ['message.received'], name: 'gone' })
    const res = await api(t, 'DELETE', '/webhooks/gone')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, webhook_id: '0', name: 'gone', url: URL_A })
    expect((await api(t, 'GET', '/webhooks/gone')).status).toBe(404)
  })
})

describe('signing secret', () => {
  it('GET shows signing off, POST mints and turns it on, GET reads the same secret, DELETE turns it off', async () => {
    const t = await newTenant()
    await createWebhook(t, { url: URL_A, subscribed_to: ['message.received'], name: 's' })
    expect((await api(t, 'GET', '/webhooks/s/signing-secret')).body).toEqual({
      success: true,
      webhook_id: '0',
      signing_enabled: false,
      signing_secret: null,
      signing_secret_created_at: null,
    })
    const minted = await api<{ signing_secret: string; signing_enabled: boolean }>(t, 'POST', '/webhooks/s/signing-secret')
    expect(minted.status).toBe(200)
    expect(minted.body.signing_enabled).toBe(true)
    expect(minted.body.signing_secret).toMatch(/^whsec_/)
    expect((await api(t, 'GET', '/webhooks/s/signing-secret')).body).toMatchObject({ signing_enabled: true, signing_secret: minted.body.signing_secret })
    const rotated = await api<{ signing_secret: string }>(t, 'POST', '/webhooks/s/signing-secret')
    expect(rotated.body.signing_secret).not.toBe(minted.body.signing_secret)
    expect((await api<{ webhook: WireWebhook }>(t, 'GET', '/webhooks/s')).body.webhook.signing_enabled).toBe(true)
    const off = await api(t, 'DELETE', '/webhooks/s/signing-secret')
    expect(off.body).toEqual({ success: true, webhook_id: '0', signing_enabled: false, signing_secret: null, signing_secret_created_at: null })
    expect((await api<{ webhook: WireWebhook }>(t, 'GET', '/webhooks/s')).body.webhook).toMatchObject({
      signing_enabled: false,
      signing_secret_created_at: null,
    })
  })
})

describe('OpenAPI', () => {
  it('describes every webhook route', async () => {
    const doc = await (await call('/v1/openapi.json')).json<{ paths: Record<string, Record<string, unknown>> }>()
    for (const path of [
      '/webhooks',
      '/webhooks/events',
      '/webhooks/{webhookId}',
      '/webhooks/{webhookId}/test',
      '/webhooks/{webhookId}/health',
      '/webhooks/{webhookId}/reenable',
      '/webhooks/{webhookId}/signing-secret',
      '/webhooks/{webhookId}/deliveries',
      '/webhooks/{webhookId}/replay',
    ]) {
      expect(doc.paths[path], path).toBeDefined()
    }
  })
})
