/**
 * Abuse limits (issue 14 §2): the Workers Rate Limiting bindings of wrangler.toml, as `wrangler dev` runs them,
 * answer 429 in the route family's error shape with Retry-After, on both sides of each small limit; the large
 * request and push limits are checked with a binding that says "over"; failed authentication is throttled per client
 * address; unknown keys are cached; request bodies are capped, streamed ones included; a short ADMIN_TOKEN turns the
 * admin API off.
 */
import { env, exports } from 'cloudflare:workers'
import { createExecutionContext } from 'cloudflare:test'
import { afterEach, describe, expect, it } from 'vitest'
import { app } from '../../../worker/app'
import { sha256Hex } from '../../../worker/lib/crypto'
import { RATE_LIMITS } from '../../../worker/lib/rate-limit'
import { rateLimitClock } from '../../../worker/lib/rate-limit-state'
import { ADMIN_TOKEN, body, call, connectCustom, newTenant, ORIGIN, uniqueAddress } from '../helpers'
import { issueRelay } from '../relay-helpers'

const connect = (key: string, phone: string, extra: Record<string, unknown> = {}) =>
  call('/v1/channels/alpha-web/connections', { method: 'POST', key, json: { phone_number: phone, ...extra } })

let phoneSeq = 0
const newPhone = () => `+1888${String(Date.now() % 1_000_000).padStart(6, '0')}${phoneSeq++ % 10}`

async function expect429(res: Response, family: 'status' | 'messaging', periodS: number) {
  expect(res.status).toBe(429)
  expect(res.headers.get('Retry-After')).toBe(String(periodS))
  const b = await body(res)
  if (family === 'status') expect(b).toEqual({ success: false, error: expect.any(String), error_code: 429 })
  else expect(b).toEqual({ error_code: 'rate_limited', error: expect.any(String), retry_after_s: periodS })
}

/** The Worker with one binding replaced by one that is always over its limit. */
function withExhausted(name: keyof typeof RATE_LIMITS) {
  const over: RateLimit = { limit: async () => ({ success: false }) }
  return (path: string, init: RequestInit) => app.fetch(new Request(ORIGIN + path, init), { ...env, [name]: over }, createExecutionContext())
}

/**
 * The Worker with the request and push limits replaced by bindings that count what they are asked and answer
 * `answers` in turn (then "allowed") once `gate` opens, with the clock frozen inside one window so the sampling
 * below is exact.
 */
function withCounted(answers: boolean[] = [], gate: Promise<void> = Promise.resolve()) {
  freezeInsideWindow()
  const asked = { RL_API_KEY: 0, RL_TENANT: 0, RL_INBOUND: 0 }
  const counting = (name: keyof typeof asked): RateLimit => ({
    limit: async () => {
      asked[name]++
      const success = answers.shift() ?? true
      await gate
      return { success }
    },
  })
  const bindings = { RL_API_KEY: counting('RL_API_KEY'), RL_TENANT: counting('RL_TENANT'), RL_INBOUND: counting('RL_INBOUND') }
  const fetch = (path: string, init: RequestInit) => app.fetch(new Request(ORIGIN + path, init), { ...env, ...bindings }, createExecutionContext())
  return { asked, fetch }
}

/**
 * A moment 3.5 s into a 10 s window (and so into a 60 s one), frozen for the local counts: in the minute before this
 * one, so no count a request made on the real clock (a warm-up) is in its window.
 */
function freezeInsideWindow(): void {
  const now = Date.now() - (Date.now() % 60_000) - 60_000 + 3_500
  rateLimitClock.now = () => now
}

afterEach(() => {
  rateLimitClock.now = () => Date.now()
})

/** A second live key for the tenant, minted through the admin API (which clears this isolate's key cache). */
async function secondKey(tenantId: string): Promise<string> {
  const res = await call(`/admin/tenants/${tenantId}/keys`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })
  expect(res.status).toBeLessThan(300)
  return (await body<{ key: string }>(res)).key
}

const pushInit = (key: string): RequestInit => ({
  method: 'POST',
  headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
  body: JSON.stringify({ customData: { body: 'hi', fromId: 'u1' } }),
})

describe('linking limits', () => {
  it('lets a number be asked to link 5 times a minute per tenant, then answers 429 with Retry-After', async () => {
    const t = await newTenant()
    const phone = newPhone()
    for (let i = 0; i < RATE_LIMITS.RL_CONNECT_NUMBER.limit; i++) expect((await connect(t.key, phone)).status).toBe(200)
    await expect429(await connect(t.key, phone), 'status', 60)
  })

  it('lets a phone get 3 pairing codes a minute, counted across tenants', async () => {
    const phone = newPhone()
    for (let i = 0; i < RATE_LIMITS.RL_PAIRING_CODE.limit; i++) {
      const t = await newTenant()
      expect((await connect(t.key, phone, { link_method: 'pairing_code' })).status).toBe(200)
    }
    const other = await newTenant()
    await expect429(await connect(other.key, phone, { link_method: 'pairing_code' }), 'status', 60)
    // A QR link of the same number by that tenant prompts nothing on the phone: not counted here.
    expect((await connect(other.key, phone)).status).toBe(200)
  })
})

describe('request and push limits', () => {
  it('answers 429 in the messaging shape once the API key is over its limit', async () => {
    const t = await newTenant()
    const res = await withExhausted('RL_API_KEY')('/v1/messages', { headers: { 'X-API-Key': t.key } })
    await expect429(res, 'messaging', 10)
  })

  it('answers 429 in the status shape once the tenant is over its request limit', async () => {
    const t = await newTenant()
    // With one key the key's own, lower limit holds the tenant (see below); a second key makes the tenant's count.
    await secondKey(t.tenantId)
    await expect429(await withExhausted('RL_TENANT')('/v1/webhooks', { headers: { 'X-API-Key': t.key } }), 'status', 10)
  })

  it('answers 429 to an inbound push once the tenant is over its push limit', async () => {
    const t = await newTenant()
    await secondKey(t.tenantId)
    const res = await withExhausted('RL_INBOUND')('/v1/channels/custom/inbound', pushInit(t.key))
    await expect429(res, 'status', 10)
  })

  it('answers 429 to a webhook test once the tenant is over its test limit', async () => {
    const t = await newTenant()
    const res = await withExhausted('RL_WEBHOOK_TEST')('/v1/webhooks/1/test', { method: 'POST', headers: { 'X-API-Key': t.key } })
    await expect429(res, 'status', 60)
  })
})

describe('tenant limits a one-key tenant cannot reach', () => {
  it('holds: the per-key limit allows no more than the tenant and push limits in the same period', () => {
    for (const name of ['RL_TENANT', 'RL_INBOUND'] as const) {
      expect(RATE_LIMITS[name].periodS).toBe(RATE_LIMITS.RL_API_KEY.periodS)
      expect(RATE_LIMITS[name].limit).toBeGreaterThanOrEqual(RATE_LIMITS.RL_API_KEY.limit)
    }
  })

  it('asks only the per-key binding for a request and a push of a tenant with one key, and still states all three limits', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const { asked, fetch } = withCounted()
    const get = await fetch('/v1/usage', { headers: { 'X-API-Key': t.key } })
    expect(get.status).toBe(200)
    expect(get.headers.get('RateLimit-Policy')).toBe('"api-key";q=6000;w=10, "tenant";q=12000;w=10')
    const push = await fetch('/v1/channels/custom/inbound', pushInit(t.key))
    expect(push.status).toBe(200)
    expect(push.headers.get('RateLimit-Policy')).toBe('"api-key";q=6000;w=10, "tenant";q=12000;w=10, "inbound";q=6000;w=10')
    // The push is the key's second request of the window: sampled out (see below).
    expect(asked).toEqual({ RL_API_KEY: 1, RL_TENANT: 0, RL_INBOUND: 0 })
  })

  it('asks the tenant and push bindings from the moment the tenant has a second key, for the first key too', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const { asked, fetch } = withCounted()
    expect((await fetch('/v1/channels/custom/inbound', pushInit(t.key))).status).toBe(200)
    expect(asked).toEqual({ RL_API_KEY: 1, RL_TENANT: 0, RL_INBOUND: 0 })
    const other = await secondKey(t.tenantId)
    expect((await fetch('/v1/channels/custom/inbound', pushInit(t.key))).status).toBe(200)
    expect((await fetch('/v1/usage', { headers: { 'X-API-Key': other } })).status).toBe(200)
    // Each counter asks for its first request of the window: the first key's second push asks the tenant and push
    // bindings (their first), the second key's GET its own key binding (its first) but not the tenant's (its second).
    expect(asked).toEqual({ RL_API_KEY: 2, RL_TENANT: 1, RL_INBOUND: 1 })
  })

  it('skips the tenant binding for an MCP call with the tenant’s only key, as for REST, and asks it once there is a second key', async () => {
    const t = await newTenant()
    const { asked, fetch } = withCounted()
    const mcp = (key: string) =>
      fetch('/mcp', {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      })
    const only = await mcp(t.key)
    expect(only.status).toBe(200)
    expect(asked).toMatchObject({ RL_API_KEY: 1, RL_TENANT: 0 })
    const other = await secondKey(t.tenantId)
    expect((await mcp(other)).status).toBe(200)
    expect(asked).toMatchObject({ RL_API_KEY: 2, RL_TENANT: 1 })
  })
})

describe('sampled request and push limits', () => {
  it('ask the binding for a key’s first request of a window and every tenth after it, stating every request in the headers', async () => {
    const t = await newTenant()
    const { asked, fetch } = withCounted()
    const remaining: string[] = []
    for (let i = 0; i < 21; i++) {
      const res = await fetch('/v1/usage', { headers: { 'X-API-Key': t.key } })
      expect(res.status).toBe(200)
      remaining.push(res.headers.get('RateLimit')!.split(',')[0]!)
    }
    expect(RATE_LIMITS.RL_API_KEY.sampleEvery).toBe(10)
    expect(asked.RL_API_KEY).toBe(3)
    expect(remaining.at(-1)).toBe('"api-key";r=5979;t=7')
  })

  it('ask once for requests that arrive together: an ask’s credit is theirs from the moment it starts', async () => {
    const t = await newTenant()
    await call('/v1/usage', { key: t.key }) // the key is looked up and cached once, outside the counted run
    const { asked, fetch } = withCounted()
    const answers = await Promise.all(Array.from({ length: 20 }, () => fetch('/v1/usage', { headers: { 'X-API-Key': t.key } })))
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200))
    expect(asked.RL_API_KEY).toBe(2)
  })

  it('let the requests that come while an ask is in flight take its credit, and refuse every one from its “over” on', async () => {
    const t = await newTenant()
    let open = () => {}
    const { asked, fetch } = withCounted([false, false], new Promise((resolve) => (open = resolve)))
    const usage = () => fetch('/v1/usage', { headers: { 'X-API-Key': t.key } })
    // They take the credit instead of waiting for the ask: in workerd a request that waits on another request's I/O
    // hangs (an earlier version waited, and this test timed out on it).
    const first = usage() // asks, and its answer is held
    const meanwhile: number[] = []
    for (let i = 0; i < 9; i++) meanwhile.push((await usage()).status)
    expect(meanwhile).toEqual([...Array(9).fill(200)])
    expect(asked.RL_API_KEY).toBe(1)
    open()
    expect((await first).status).toBe(429)
    // Over: every request asks, and is refused until the binding allows one.
    expect((await usage()).status).toBe(429)
    expect((await usage()).status).toBe(200)
    expect((await usage()).status).toBe(200)
    expect(asked.RL_API_KEY).toBe(3)
  })

  it('ask on every request after an “over” until the binding allows again, then sample again', async () => {
    const t = await newTenant()
    const { asked, fetch } = withCounted([false, false, true])
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) statuses.push((await fetch('/v1/usage', { headers: { 'X-API-Key': t.key } })).status)
    expect(statuses).toEqual([429, 429, 200, 200, 200])
    expect(asked.RL_API_KEY).toBe(3)
  })
})

describe('failed authentication', () => {
  it('throttles an address after 20 wrong keys in a minute, even its right key, and no other address', async () => {
    const t = await newTenant()
    const ip = uniqueAddress()
    const wrong = () => call('/v1/messages', { key: 'svc_live_wrong', headers: { 'CF-Connecting-IP': ip } })
    for (let i = 0; i < RATE_LIMITS.RL_AUTH_FAILURES.limit; i++) expect((await wrong()).status).toBe(401)
    await expect429(await wrong(), 'messaging', 60)
    await expect429(await call('/v1/messages', { key: t.key, headers: { 'CF-Connecting-IP': ip } }), 'messaging', 60)
    expect((await call('/v1/messages', { key: t.key, headers: { 'CF-Connecting-IP': uniqueAddress() } })).status).toBe(200)
  })

  it('throttles wrong admin tokens the same way', async () => {
    const ip = uniqueAddress()
    const wrong = () => call('/admin/tenants', { method: 'POST', json: {}, headers: { Authorization: 'Bearer nope', 'CF-Connecting-IP': ip } })
    for (let i = 0; i < RATE_LIMITS.RL_AUTH_FAILURES.limit; i++) expect((await wrong()).status).toBe(401)
    await expect429(await wrong(), 'status', 60)
  })

  it('throttles wrong relay tokens on /relay/connect and /relay/media the same way, and then a right one from there too', async () => {
    const { token } = await issueRelay()
    const ip = uniqueAddress()
    const relay = (path: string, bearer: string, method = 'GET') =>
      call(path, { method, headers: { Authorization: `Bearer ${bearer}`, 'CF-Connecting-IP': ip, ...(method === 'GET' ? { Upgrade: 'websocket' } : {}) } })
    for (let i = 0; i < RATE_LIMITS.RL_AUTH_FAILURES.limit; i++) {
      const res = i % 2 ? await relay('/relay/connect', 'rly_wrong') : await relay('/relay/media/sid/up', 'rly_wrong', 'PUT')
      expect(res.status, await res.text()).toBe(401)
    }
    await expect429(await relay('/relay/connect', 'rly_wrong'), 'status', 60)
    await expect429(await relay('/relay/connect', token), 'status', 60)
  })

  it('remembers an unknown key for a while instead of looking it up each time', async () => {
    const t = await newTenant()
    const key = `svc_live_${crypto.randomUUID().replaceAll('-', '')}`
    expect((await call('/v1/messages', { key })).status).toBe(401)
    // The key becomes valid behind the cache's back (no admin call clears it): the cached "unknown" still answers.
    await env.DB.prepare('INSERT INTO api_keys (id, tenant_id, hash, prefix, created_at) VALUES (?, ?, ?, ?, ?)')
      .bind(`key_${Date.now()}`, t.tenantId, await sha256Hex(key), key.slice(0, 12), Date.now())
      .run()
    expect((await call('/v1/messages', { key })).status).toBe(401)
  })
})

describe('body size', () => {
  const big = JSON.stringify({ to: { phone: '+447700900001' }, text: 'x'.repeat(300 * 1024) })

  it('refuses a /v1 body over 256 KiB with 413 in the family shape', async () => {
    const t = await newTenant()
    const res = await call('/v1/messages', { method: 'POST', key: t.key, headers: { 'Content-Type': 'application/json' }, body: big })
    expect(res.status).toBe(413)
    expect(await body(res)).toMatchObject({ error_code: 'body_too_large' })
  })

  it('refuses an /admin body over 256 KiB', async () => {
    const res = await call('/admin/tenants', {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: big,
    })
    expect(res.status).toBe(413)
    expect(await body(res)).toEqual({ success: false, error: expect.any(String), error_code: 413 })
  })

  it('cuts an /mcp body without Content-Length off at the cap instead of reading it to the end', async () => {
    const t = await newTenant()
    const chunk = new Uint8Array(64 * 1024).fill(0x20)
    // Never ends: a server that buffers the whole body before checking its size would wait forever.
    const endless = new ReadableStream<Uint8Array>({ pull: (ctl) => ctl.enqueue(chunk) })
    const res = await exports.default.fetch(
      new Request(`${ORIGIN}/mcp`, {
        method: 'POST',
        headers: { 'X-API-Key': t.key, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: endless,
      })
    )
    expect(res.status).toBe(413)
  })
})

describe('ADMIN_TOKEN', () => {
  it('keeps the admin API off when the token is shorter than 32 characters', async () => {
    const short = 'x'.repeat(31)
    const res = await app.fetch(
      new Request(`${ORIGIN}/admin/tenants`, { headers: { Authorization: `Bearer ${short}` } }),
      { ...env, ADMIN_TOKEN: short },
      createExecutionContext()
    )
    expect(res.status).toBe(503)
    expect((await body<{ error: string }>(res)).error).toContain('at least 32 characters')
  })
})
