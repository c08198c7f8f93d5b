/**
 * API-key authentication (spec part 5): the three places, refusals in each family's shape, the MCP variant without
 * the query, and the in-process shortcut MCP tool calls use (vouchFor): nothing a client sends can be vouched.
 */
import { createExecutionContext } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { app } from '../../../worker/app'
import { revokeApiKey, tenantForApiKey } from '../../../worker/db/api-keys'
import { database } from '../../../worker/db/client'
import type { AppEnv } from '../../../worker/env'
import { onError } from '../../../worker/errors'
import { AUTH_CACHE_TTL_MS, apiKeyAuth, authenticateKey, keyFromHeaders, vouchFor } from '../../../worker/middleware/api-key'
import { randomBase62 } from '../../../worker/lib/crypto'
import { ORIGIN, body, call, newTenant, type KeyPlace } from '../helpers'

describe('API key places', () => {
  for (const place of ['bearer', 'header', 'query'] as KeyPlace[]) {
    it(`accepts the key in ${place === 'bearer' ? 'Authorization: Bearer' : place === 'header' ? 'X-API-Key' : 'the apiKey query parameter'}`, async () => {
      const t = await newTenant()
      for (const path of ['/v1/usage', '/v1/messages', '/v1/channels/custom']) {
        expect((await call(path, { key: t.key, keyPlace: place })).status, path).toBe(200)
      }
    })
  }

  it('takes the bearer scheme name in any case', async () => {
    const t = await newTenant()
    expect((await call('/v1/usage', { headers: { Authorization: `bearer ${t.key}` } })).status).toBe(200)
  })

  it('prefers a header key over the query parameter', async () => {
    const t = await newTenant()
    expect((await call(`/v1/usage?apiKey=svc_live_${randomBase62(40)}`, { key: t.key, keyPlace: 'header' })).status).toBe(200)
  })
})

describe('refusals', () => {
  const wrongKeys = [`svc_live_${randomBase62(40)}`, `sk_live_${randomBase62(40)}`, 'svc_live_', 'x'.repeat(500)]

  it('answers 401 in the messaging shape, with WWW-Authenticate, for a missing or unknown key on messaging routes', async () => {
    for (const key of [undefined, ...wrongKeys]) {
      const res = await call('/v1/usage', { key })
      expect(res.status).toBe(401)
      expect(res.headers.get('WWW-Authenticate')).toMatch(/^Bearer/)
      expect(await body(res)).toEqual({ error_code: 'unauthorized', error: expect.any(String) })
    }
  })

  it('answers 401 in the status shape on channel routes', async () => {
    for (const key of [undefined, ...wrongKeys]) {
      const res = await call('/v1/channels/custom', { key })
      expect(res.status).toBe(401)
      expect(await body(res)).toEqual({ success: false, error: expect.any(String), error_code: 401 })
    }
  })

  it('refuses an empty Bearer value and an empty X-API-Key', async () => {
    expect((await call('/v1/usage', { headers: { Authorization: 'Bearer ' } })).status).toBe(401)
    expect((await call('/v1/usage', { headers: { 'X-API-Key': '' } })).status).toBe(401)
  })
})

describe('keyFromHeaders', () => {
  it('reads Authorization: Bearer first, then X-API-Key', () => {
    expect(keyFromHeaders(new Headers({ Authorization: 'Bearer k1', 'X-API-Key': 'k2' }))).toBe('k1')
    expect(keyFromHeaders(new Headers({ 'X-API-Key': ' k2 ' }))).toBe('k2')
    expect(keyFromHeaders(new Headers({ Authorization: 'Basic abc' }))).toBeUndefined()
    expect(keyFromHeaders(new Headers())).toBeUndefined()
  })
})

describe('apiKeyAuth without the query place (MCP)', () => {
  const app = new Hono<AppEnv>()
  app.use('*', async (c, next) => (c.set('errorFamily', 'status'), next()))
  app.onError(onError)
  app.use('*', apiKeyAuth({ allowQuery: false }))
  app.get('/mcp', (c) => c.json({ tenant: c.get('tenant').id }))

  it('refuses a key in the URL and accepts it in a header', async () => {
    const t = await newTenant()
    const inQuery = await app.request(`/mcp?apiKey=${t.key}`, {}, env)
    expect(inQuery.status).toBe(401)
    const inHeader = await app.request('/mcp', { headers: { 'X-API-Key': t.key } }, env)
    expect(await inHeader.json()).toEqual({ tenant: t.tenantId })
  })
})

// In the same isolate, as the MCP handler calls it (exports.default.fetch would copy the Request across a boundary).
const inProcess = (request: Request) => app.fetch(request, env, createExecutionContext())

describe('vouched in-process requests', () => {
  it('serves a vouched request as its tenant', async () => {
    const t = await newTenant()
    const tenant = (await tenantForApiKey(database(env.DB), t.key))!
    const res = await inProcess(vouchFor(new Request(`${ORIGIN}/v1/accounts`), tenant))
    expect(res.status).toBe(200)
    expect(await body(res)).toEqual({ accounts: [] })
  })

  it('still asks an identical request that was not vouched for its key', async () => {
    const res = await inProcess(new Request(`${ORIGIN}/v1/accounts`))
    expect(res.status).toBe(401)
  })
})

describe('the isolate cache of key lookups', () => {
  it('keeps a revoked key working at most AUTH_CACHE_TTL_MS in an isolate that did not revoke it', async () => {
    const t = await newTenant()
    const db = database(env.DB)
    const t0 = 10_000_000_000_000 + Math.floor(Math.random() * 1e9)
    expect((await authenticateKey(db, t.key, t0))?.tenant.id).toBe(t.tenantId)
    // Revoked in D1 directly, as another isolate's request would: this isolate's cache is not cleared.
    expect(await revokeApiKey(db, t.keyId, Date.now())).toBe(t.tenantId)
    expect((await authenticateKey(db, t.key, t0 + AUTH_CACHE_TTL_MS - 1))?.tenant.id).toBe(t.tenantId)
    expect(await authenticateKey(db, t.key, t0 + AUTH_CACHE_TTL_MS)).toBeUndefined()
  })

  it('answers from the cache within the TTL without asking D1, and asks again after it', async () => {
    const t = await newTenant()
    const db = database(env.DB)
    const t0 = 20_000_000_000_000 + Math.floor(Math.random() * 1e9)
    let queries = 0
    const counting = new Proxy(db, {
      get: (target, prop, receiver) => {
        if (prop === 'select') queries++
        return Reflect.get(target, prop, receiver)
      },
    })
    await authenticateKey(counting, t.key, t0)
    await authenticateKey(counting, t.key, t0 + AUTH_CACHE_TTL_MS - 1)
    expect(queries).toBe(1)
    await authenticateKey(counting, t.key, t0 + AUTH_CACHE_TTL_MS)
    expect(queries).toBe(2)
  })
})
