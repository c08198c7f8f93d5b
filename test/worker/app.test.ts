/** The app shell: the two error body families (spec part 7), unknown routes, the OpenAPI document and /docs. */
import { Hono } from 'hono'
import { describe, expect, it, vi } from 'vitest'
import { errorFamilyFor } from '../../worker/app'
import type { AppEnv } from '../../worker/env'
import { ApiError, errorBody, onError } from '../../worker/errors'
import { body, call, newTenant, ORIGIN } from './helpers'

describe('errorFamilyFor', () => {
  it('puts messages, accounts and usage in the messaging family and everything else in the status family', () => {
    for (const p of ['/v1/messages', '/v1/messages/wait', '/v1/messages/msg_1', '/v1/accounts', '/v1/usage']) expect(errorFamilyFor(p), p).toBe('messaging')
    for (const p of [
      '/v1/channels/custom',
      '/v1/channels/custom/inbound',
      '/v1/webhooks',
      '/admin/tenants',
      '/v1/messagesX',
      '/v1/usage-report',
      '/docs',
      '/v1/nope',
    ]) {
      expect(errorFamilyFor(p), p).toBe('status')
    }
  })
})

describe('errorBody', () => {
  const limit = new ApiError(429, 'daily_send_cap', 'cap reached', 3600)

  it('renders {error_code: string, error, retry_after_s?} for messaging', () => {
    expect(errorBody(limit, 'messaging')).toEqual({ error_code: 'daily_send_cap', error: 'cap reached', retry_after_s: 3600 })
    expect(errorBody(new ApiError(400, 'invalid_text', 'bad'), 'messaging')).toEqual({ error_code: 'invalid_text', error: 'bad' })
  })

  it('renders {success: false, error, error_code: <status>} for the status family', () => {
    expect(errorBody(limit, 'status')).toEqual({ success: false, error: 'cap reached', error_code: 429 })
  })
})

describe('onError', () => {
  const app = new Hono<AppEnv>()
  app.use('*', async (c, next) => (c.set('errorFamily', 'messaging'), next()))
  app.onError(onError)
  app.get('/boom', () => {
    throw new Error('database password is hunter2')
  })

  it('answers an unexpected error with a bare 500 that leaks nothing, and logs it', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const res = await app.request('/boom')
    expect(res.status).toBe(500)
    const text = await res.text()
    expect(JSON.parse(text)).toEqual({ error_code: 'internal_error', error: 'internal error' })
    expect(text).not.toContain('hunter2')
    expect(log).toHaveBeenCalledOnce()
    log.mockRestore()
  })
})

describe('request bodies', () => {
  it('answers a JSON body declared as another type (a form) with 415 that says how to send it, in each family', async () => {
    // A body with no Content-Type or text/plain is read as JSON (middleware/json-by-default.test.ts).
    const t = await newTenant()
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' }
    const raw = JSON.stringify({ to: { external_id: 'a' }, text: 'hi' })
    const messaging = await call('/v1/messages', { method: 'POST', key: t.key, headers: form, body: raw })
    expect(messaging.status).toBe(415)
    expect(await body(messaging)).toEqual({ error_code: 'invalid_request', error: expect.stringContaining('Content-Type: application/json') })
    const status = await call('/v1/channels/custom', {
      method: 'PUT',
      key: t.key,
      headers: form,
      body: JSON.stringify({ webhook_url: 'https://bridge.example.com/' }),
    })
    expect(status.status).toBe(415)
    expect(await body(status)).toEqual({ success: false, error: expect.stringContaining('Content-Type: application/json'), error_code: 415 })
  })

  it('answers an unparsable JSON body with 400 invalid_request', async () => {
    const t = await newTenant()
    const res = await call('/v1/messages', { method: 'POST', key: t.key, headers: { 'Content-Type': 'application/json' }, body: '{' })
    expect(res.status).toBe(400)
    expect(await body(res)).toEqual({ error_code: 'invalid_request', error: 'the request body is not valid JSON' })
  })
})

describe('unknown routes', () => {
  it('answers 404 in the status shape outside the messaging family', async () => {
    const t = await newTenant()
    for (const path of ['/v1/nope', '/nope']) {
      const res = await call(path, { key: t.key })
      expect(res.status, path).toBe(404)
      expect(await body(res)).toEqual({ success: false, error: expect.any(String), error_code: 404 })
    }
  })

  it('answers 404 in the messaging shape inside it', async () => {
    const t = await newTenant()
    const res = await call('/v1/messages/a/b', { key: t.key })
    expect(res.status).toBe(404)
    expect(await body(res)).toEqual({ error_code: 'not_found', error: expect.any(String) })
  })

  it('asks for a key before saying whether an API route exists', async () => {
    expect((await call('/v1/nope')).status).toBe(401)
  })
})

describe('GET /v1/openapi.json', () => {
  type Doc = {
    openapi: string
    info: { version: string }
    servers: { url: string }[]
    paths: Record<string, Record<string, { parameters?: { name: string; schema: { default?: unknown; maximum?: number; minimum?: number } }[] }>>
    components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> }
  }

  it('is public and describes every REST route of issue #2 with its parameters', async () => {
    const res = await call('/v1/openapi.json')
    expect(res.status).toBe(200)
    const doc = await body<Doc>(res)
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.info.version).toBe('1.0.0')
    expect(doc.servers[0]?.url).toBe(`${ORIGIN}/v1`)
    expect(Object.keys(doc.paths).sort()).toEqual(
      expect.arrayContaining(['/accounts', '/usage', '/messages', '/messages/wait', '/messages/{id}', '/channels/custom', '/channels/custom/inbound'])
    )
    expect(Object.keys(doc.paths['/messages']!).sort()).toEqual(['get', 'post'])
    expect(Object.keys(doc.paths['/channels/custom']!).sort()).toEqual(['delete', 'get', 'put'])
    const waitParams = doc.paths['/messages/wait']!.get!.parameters!
    expect(waitParams.find((p) => p.name === 'timeout_s')?.schema).toMatchObject({ default: 25, minimum: 0, maximum: 55 })
    const listParams = doc.paths['/messages']!.get!.parameters!
    expect(listParams.find((p) => p.name === 'limit')?.schema).toMatchObject({ default: 50, minimum: 1, maximum: 100 })
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKeyHeader', 'apiKeyQuery', 'bearer'])
    // Spec part 2 names the resources' schemas: WireAccount, WireMessage, WebhookSubscription, WebhookHealthStatus.
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['WireMessage', 'WireAccount', 'WebhookSubscription', 'WebhookHealthStatus', 'Usage', 'MessagingError', 'StatusError'])
    )
  })

  it('does not describe the admin API', async () => {
    const doc = await body<Doc>(await call('/v1/openapi.json'))
    expect(Object.keys(doc.paths).some((p) => p.includes('admin'))).toBe(false)
  })
})

describe('GET /docs', () => {
  it('serves Scalar’s reference from this origin on /v1/openapi.json, its settings as data, under a strict policy', async () => {
    const res = await call('/docs')
    expect(res.status).toBe(200)
    expect(res.headers.get('Content-Type')).toMatch(/^text\/html/)
    const csp = res.headers.get('Content-Security-Policy') ?? ''
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("connect-src 'self'")
    expect(csp).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/)
    const html = await res.text()
    expect(html).toContain('<title>Messaging Gateway API</title>')
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)].map((m) => ({ attrs: m[1]!, body: m[2]! }))
    expect(scripts.map((s) => s.attrs.trim())).toEqual(['type="application/json" id="docs-config"', 'src="/docs/scalar.js"', 'src="/docs/start.js"'])
    const config = JSON.parse(scripts[0]!.body) as Record<string, unknown>
    expect(config).toMatchObject({ url: '/v1/openapi.json', withDefaultFonts: false, telemetry: false })
    expect(html).not.toMatch(/https?:\/\//)
  })

  it('is where / redirects', async () => {
    const res = await call('/', { redirect: 'manual' })
    expect(res.status).toBe(302)
    expect(res.headers.get('Location')).toBe('/docs')
  })
})
