/**
 * RateLimit-Policy / RateLimit on /v1 answers (draft-ietf-httpapi-ratelimit-headers): the per-key and per-tenant
 * request limits on every authenticated answer, counting down within a window; a route's own limit where it has
 * one; the account's daily send cap on a send; r=0 with Retry-After on a 429; nothing without a key.
 */
import { env } from 'cloudflare:workers'
import { createExecutionContext } from 'cloudflare:test'
import { afterEach, describe, expect, it } from 'vitest'
import { app } from '../../../worker/app'
import { RATE_LIMITS } from '../../../worker/lib/rate-limit'
import { rateLimitClock } from '../../../worker/lib/rate-limit-state'
import { secondsToNextUtcDay } from '../../../worker/lib/time'
import { body, call, connectCustom, newTenant, ORIGIN, pushInbound, receiverChannel } from '../helpers'

/** Parses `"name";a=1;b=2, "other";a=3` into {name: {a: 1, b: 2}, …}. */
function items(header: string | null): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {}
  for (const item of (header ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [name, ...params] = item.split(';')
    out[JSON.parse(name!) as string] = Object.fromEntries(params.map((p) => p.split('=')).map(([k, v]) => [k!, Number(v)]))
  }
  return out
}

/** A moment 3.5 s into a 10 s window (and so into a 60 s one too), frozen. */
function freezeInsideWindow(): number {
  const now = Date.now() - (Date.now() % 60_000) + 3_500
  rateLimitClock.now = () => now
  return now
}

afterEach(() => {
  rateLimitClock.now = () => Date.now()
})

describe('RateLimit headers', () => {
  it('state the per-key and per-tenant request limits on an answer, in the draft’s structured-field syntax', async () => {
    const t = await newTenant()
    freezeInsideWindow()
    const res = await call('/v1/usage', { key: t.key })
    expect(res.status).toBe(200)
    expect(res.headers.get('RateLimit-Policy')).toBe('"api-key";q=6000;w=10, "tenant";q=12000;w=10')
    expect(res.headers.get('RateLimit')).toBe('"api-key";r=5999;t=7, "tenant";r=11999;t=7')
  })

  it('count down request by request within a window, and start over in the next', async () => {
    const t = await newTenant()
    const now = freezeInsideWindow()
    const remaining: number[] = []
    for (let i = 0; i < 3; i++) remaining.push(items((await call('/v1/accounts', { key: t.key })).headers.get('RateLimit'))['api-key']!.r!)
    expect(remaining).toEqual([5999, 5998, 5997])
    rateLimitClock.now = () => now + 10_000
    expect(items((await call('/v1/accounts', { key: t.key })).headers.get('RateLimit'))['api-key']).toEqual({ r: 5999, t: 7 })
  })

  it('count per key: a second key of the same tenant has its own api-key count but shares the tenant’s', async () => {
    const t = await newTenant()
    freezeInsideWindow()
    await call('/v1/accounts', { key: t.key })
    const second = await body<{ key: string }>(
      await call(`/admin/tenants/${t.tenantId}/keys`, { method: 'POST', headers: { Authorization: 'Bearer test-admin-token-for-the-workerd-suite' } })
    )
    const limits = items((await call('/v1/accounts', { key: second.key })).headers.get('RateLimit'))
    expect(limits['api-key']!.r).toBe(5999)
    expect(limits.tenant!.r).toBe(11998)
  })

  it('are on error answers too', async () => {
    const t = await newTenant()
    const res = await call('/v1/messages?limit=0', { key: t.key })
    expect(res.status).toBe(400)
    expect(items(res.headers.get('RateLimit'))).toHaveProperty('api-key')
  })

  it('add the account’s daily send cap on a send, counting down', async () => {
    const t = await newTenant()
    await connectCustom(t)
    await pushInbound(t, { body: 'hi', fromId: 'friend' })
    const send = () => call('/v1/messages', { method: 'POST', key: t.key, json: { to: { external_id: 'friend' }, text: 'hello' } })
    const first = await send()
    expect(first.status).toBe(202)
    expect(items(first.headers.get('RateLimit-Policy'))['daily-sends']).toEqual({ q: 50, w: 86400 })
    const daily = items(first.headers.get('RateLimit'))['daily-sends']!
    expect(daily.r).toBe(49)
    expect(Math.abs(daily.t! - secondsToNextUtcDay(Date.now()))).toBeLessThanOrEqual(2)
    expect(items((await send()).headers.get('RateLimit'))['daily-sends']!.r).toBe(48)
    // A read is not a send: no daily policy there.
    expect(items((await call('/v1/usage', { key: t.key })).headers.get('RateLimit'))).not.toHaveProperty('daily-sends')
  })

  it('add a route’s own limit where it has one (webhook tests: 10 a minute)', async () => {
    const t = await newTenant()
    freezeInsideWindow()
    const receiver = receiverChannel('rl-test')
    await call('/v1/webhooks', { method: 'POST', key: t.key, json: { url: receiver.url, subscribed_to: ['message.received'], name: 'h' } })
    const res = await call('/v1/webhooks/h/test', { method: 'POST', key: t.key, json: {} })
    expect(items(res.headers.get('RateLimit-Policy'))['webhook-test']).toEqual({ q: RATE_LIMITS.RL_WEBHOOK_TEST.limit, w: 60 })
    expect(items(res.headers.get('RateLimit'))['webhook-test']).toEqual({ r: 9, t: 57 })
  })

  it('report r=0 on a 429, whose Retry-After is not earlier than t', async () => {
    const t = await newTenant()
    freezeInsideWindow()
    const over: RateLimit = { limit: async () => ({ success: false }) }
    const res = await app.fetch(new Request(`${ORIGIN}/v1/usage`, { headers: { 'X-API-Key': t.key } }), { ...env, RL_API_KEY: over }, createExecutionContext())
    expect(res.status).toBe(429)
    const limit = items(res.headers.get('RateLimit'))['api-key']!
    expect(limit.r).toBe(0)
    expect(Number(res.headers.get('Retry-After'))).toBeGreaterThanOrEqual(limit.t!)
  })

  it('are absent when no key was accepted', async () => {
    const res = await call('/v1/usage')
    expect(res.status).toBe(401)
    expect(res.headers.get('RateLimit')).toBeNull()
    expect(res.headers.get('RateLimit-Policy')).toBeNull()
  })
})
