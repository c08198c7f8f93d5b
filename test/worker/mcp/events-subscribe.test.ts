// events/subscribe and events/unsubscribe (SEP-3415 webhook delivery): the callback is verified by a challenge
// first, deliveries go through the durable outbox with the SEP body and Standard Webhooks signatures the
// `standardwebhooks` package verifies, the id is derived from the subscription key, the TTL ends deliveries unless
// refreshed, the subscription shows in GET /v1/webhooks, and private URLs, bad secrets and foreign keys are refused.
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { database } from '../../../worker/db/client'
import { LAPSED_KEEP_MS, sweepWebhooks } from '../../../worker/webhooks/sweeper'
import type { Received } from '../../fixtures/receiver-types'
import { admin, call, connectCustom, newTenant, pushInbound, receiverChannel, type TestTenant } from '../helpers'
import { createWebhook, until } from '../webhook-helpers'
import { clientSecret, events, mintKeyWithId, modernRpc } from './events-helpers'

type Subscribed = { id: string; refreshBefore: string; cursor: string; truncated: boolean; deliveryStatus?: Record<string, unknown>; secret?: string }

async function callback(label = 'mcp-hook') {
  const ch = receiverChannel(label)
  const secret = clientSecret()
  await ch.behave({ echo_challenge: true, standard_secret: secret })
  return { ch, secret }
}

async function subscribe(key: string, params: Record<string, unknown>): Promise<Subscribed> {
  const answer = await modernRpc(key, 'events/subscribe', params)
  if (answer.error) throw new Error(`events/subscribe failed: ${JSON.stringify(answer.error)}`)
  return answer.result as unknown as Subscribed
}

const webhook = (url: string, secret: string) => ({ mode: 'webhook', url, secret })
const nonVerification = (log: Received[]) => log.filter((r) => (r.json as { type?: string } | null)?.type !== 'verification')

async function listed(t: TestTenant) {
  return ((await (await call('/v1/webhooks', { key: t.key })).json()) as { webhooks: Array<Record<string, unknown>> }).webhooks
}

describe('events/subscribe', () => {
  it('verifies the callback, then delivers a message.received once with the SEP body, signed for the standardwebhooks package', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const { ch, secret } = await callback()
    const started = Date.now()
    const sub = await subscribe(t.key, { name: 'message.received', delivery: webhook(ch.url, secret), ttlMs: 600_000 })
    expect(sub).toMatchObject({
      resultType: 'complete',
      id: expect.stringMatching(/^sub_[0-9A-Za-z]{22}$/),
      refreshBefore: expect.any(String),
      cursor: expect.any(String),
      truncated: false,
    })
    // A first subscribe has no delivery status yet, and the client's own secret is never echoed.
    expect(sub).not.toHaveProperty('deliveryStatus')
    expect(sub).not.toHaveProperty('secret')
    expect(Date.parse(sub.refreshBefore) - started).toBeGreaterThanOrEqual(600_000 - 50)
    expect(Date.parse(sub.refreshBefore) - started).toBeLessThan(600_000 + 5000)

    const [challenge] = await ch.log()
    expect(challenge!.json).toEqual({ type: 'verification', challenge: expect.stringMatching(/^[0-9A-Za-z]{32}$/) })
    expect(challenge!.headers).toMatchObject({ 'webhook-id': expect.stringMatching(/^msg_verification_/), 'x-mcp-subscription-id': sub.id })
    expect(challenge!.standardVerified).toBe(true)

    await pushInbound(t, { body: 'Is my order ready?', fromId: 'p-1' })
    const [, delivery] = await ch.waitFor(2)
    expect(delivery!.json).toEqual({
      eventId: expect.stringMatching(/^evt_/),
      name: 'message.received',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: expect.objectContaining({ event: 'message.received', message: expect.objectContaining({ text: 'Is my order ready?' }) }),
      cursor: expect.any(String),
    })
    const eventId = (delivery!.json as { eventId: string }).eventId
    expect(delivery!.headers).toMatchObject({ 'webhook-id': eventId, 'x-mcp-subscription-id': sub.id, 'x-webhook-event': 'message.received' })
    expect(delivery!.standardVerified).toBe(true)
    await new Promise((r) => setTimeout(r, 300))
    expect(nonVerification(await ch.log())).toHaveLength(1)
  })

  it('shows in GET /v1/webhooks with its origin and expiry, and refreshing keeps its id, skips the challenge and reports delivery', async () => {
    const t = await newTenant()
    const { ch, secret } = await callback()
    const first = await subscribe(t.key, { name: 'account.connected', arguments: { channel: 'custom' }, delivery: webhook(ch.url, secret), ttlMs: 60_000 })
    const [row] = await listed(t)
    expect(row).toMatchObject({
      name: `mcp-${first.id}`,
      url: ch.url,
      subscribed_to: ['account.connected'],
      enabled: true,
      retries_enabled: true,
      signing_enabled: true,
      origin: 'mcp',
      expires_at: first.refreshBefore,
    })
    const again = await subscribe(t.key, { name: 'account.connected', arguments: { channel: 'custom' }, delivery: webhook(ch.url, secret), ttlMs: 120_000 })
    expect(again.id).toBe(first.id)
    expect(Date.parse(again.refreshBefore)).toBeGreaterThan(Date.parse(first.refreshBefore))
    expect(again.deliveryStatus).toEqual({ active: true, lastDeliveryAt: null, lastError: null })
    expect((await ch.log()).filter((r) => (r.json as { type?: string }).type === 'verification')).toHaveLength(1)
    // The same key and URL with other arguments is another subscription, and the URL is already verified.
    const other = await subscribe(t.key, { name: 'account.connected', delivery: webhook(ch.url, secret) })
    expect(other.id).not.toBe(first.id)
    expect((await ch.log()).filter((r) => (r.json as { type?: string }).type === 'verification')).toHaveLength(1)
    expect(await listed(t)).toHaveLength(2)
    // REST subscriptions keep spec 2's shape exactly: no origin field.
    const rest = await createWebhook(t, { url: ch.url, subscribed_to: ['message.sent'] })
    expect(rest.webhook).not.toHaveProperty('origin')
  })

  it('stops delivering when the TTL runs out without a refresh', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const { ch, secret } = await callback()
    const sub = await subscribe(t.key, { name: 'message.received', delivery: webhook(ch.url, secret), ttlMs: 1000 })
    expect(Date.parse(sub.refreshBefore) - Date.now()).toBeLessThanOrEqual(1000)
    await pushInbound(t, { body: 'inside the TTL', fromId: 'p-1' })
    await ch.waitFor(2)
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(sub.refreshBefore) - Date.now()) + 100))
    await pushInbound(t, { body: 'after the TTL', fromId: 'p-1' })
    await new Promise((r) => setTimeout(r, 700))
    expect(nonVerification(await ch.log()).map((r) => (r.json as { data: { message: { text: string } } }).data.message.text)).toEqual(['inside the TTL'])
    // Expired, it no longer counts against the cap, but stays listed for a day with its expiry.
    expect((await listed(t))[0]).toMatchObject({ origin: 'mcp', expires_at: sub.refreshBefore })
  })

  it('catches a new subscription up from the client cursor: what happened since is delivered', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const { ch, secret } = await callback()
    const polled = await modernRpc(t.key, 'events/poll', { name: 'message.received' })
    const cursor = (polled.result as { cursor: string }).cursor
    await pushInbound(t, { body: 'while nobody listened', fromId: 'p-2' })
    const sub = await subscribe(t.key, { name: 'message.received', delivery: webhook(ch.url, secret), cursor })
    expect(sub.truncated).toBe(false)
    const [, caughtUp] = await ch.waitFor(2)
    expect((caughtUp!.json as { data: { message: { text: string } } }).data.message.text).toBe('while nobody listened')
  })

  it('resumes after an unsubscribe from the cursor of the last delivery without repeating it', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const { ch, secret } = await callback()
    const params = { name: 'message.received', delivery: webhook(ch.url, secret) }
    await subscribe(t.key, params)
    await pushInbound(t, { body: 'first', fromId: 'p-4' })
    const [, first] = await ch.waitFor(2)
    const { cursor } = first!.json as { cursor: string }
    expect((await events('modern', t.key, 'events/unsubscribe', { name: 'message.received', delivery: { url: ch.url } })).error).toBeUndefined()
    await pushInbound(t, { body: 'while unsubscribed', fromId: 'p-4' })
    await subscribe(t.key, { ...params, cursor })
    await ch.waitFor(3)
    await new Promise((r) => setTimeout(r, 300))
    const texts = nonVerification(await ch.log()).map((r) => (r.json as { data: { message: { text: string } } }).data.message.text)
    expect(texts).toEqual(['first', 'while unsubscribed'])
  })

  it('takes the short form of issue 24 (callback_url, ttl in seconds) and mints the secret when none is sent', async () => {
    const t = await newTenant()
    const ch = receiverChannel('short')
    await ch.behave({ echo_challenge: true })
    const sub = await subscribe(t.key, { name: 'message.failed', callback_url: ch.url, ttl: 300 })
    expect(sub.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Date.parse(sub.refreshBefore) - Date.now()).toBeGreaterThan(290_000)
    const [challenge] = await ch.log()
    expect(challenge!.headers['webhook-signature']).toMatch(/^v1,/)
  })

  it('is unsubscribed by the same key, and stays unknown afterwards', async () => {
    const t = await newTenant()
    const { ch, secret } = await callback()
    await subscribe(t.key, { name: 'message.read', delivery: webhook(ch.url, secret) })
    const params = { name: 'message.read', delivery: { url: ch.url } }
    expect((await events('legacy', t.key, 'events/unsubscribe', params)).result).toEqual({})
    expect(await listed(t)).toEqual([])
    expect((await events('modern', t.key, 'events/unsubscribe', params)).error).toMatchObject({ code: -32023, data: { kind: 'subscription' } })
  })

  it('stops delivering once the key that subscribed is revoked', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const agent = await mintKeyWithId(t, { scope: 'read' })
    const { ch, secret } = await callback()
    await subscribe(agent.key, { name: 'message.received', delivery: webhook(ch.url, secret) })
    expect((await call(`/v1/keys/${agent.id}`, { method: 'DELETE', key: t.key })).status).toBe(200)
    await pushInbound(t, { body: 'after the revocation', fromId: 'p-3' })
    await new Promise((r) => setTimeout(r, 700))
    expect(nonVerification(await ch.log())).toEqual([])
  })
})

describe('events/subscribe refusals', () => {
  const refusal = async (t: TestTenant, params: Record<string, unknown>) =>
    (await modernRpc(t.key, 'events/subscribe', { name: 'message.received', ...params })).error

  it('refuses private, non-https and own-host callback URLs with -32602, before sending anything', async () => {
    const t = await newTenant()
    const secret = clientSecret()
    for (const url of [
      'https://10.0.0.8/hooks',
      'https://192.168.1.20/hooks',
      'https://169.254.169.254/latest',
      'http://hooks.example.com/x',
      'https://gateway.test/hooks',
    ]) {
      expect(await refusal(t, { delivery: webhook(url, secret) }), url).toMatchObject({ code: -32602, message: expect.stringContaining('not allowed') })
    }
    expect(await listed(t)).toEqual([])
  })

  it('refuses a secret that is not whsec_ with base64 of 24 to 64 bytes', async () => {
    const t = await newTenant()
    const ch = receiverChannel('bad-secret')
    for (const secret of ['hunter2', 'whsec_short', `whsec_${btoa('x'.repeat(70))}`]) {
      expect(await refusal(t, { delivery: webhook(ch.url, secret) }), secret).toMatchObject({ code: -32602, message: expect.stringContaining('whsec_') })
    }
    expect(await ch.log()).toEqual([])
  })

  it('refuses a callback that does not echo the challenge (-32027 challenge_failed) or fails (http_5xx), and keeps nothing', async () => {
    const t = await newTenant()
    const silent = receiverChannel('silent')
    expect(await refusal(t, { delivery: webhook(silent.url, clientSecret()) })).toMatchObject({ code: -32027, data: { reason: 'challenge_failed' } })
    const broken = receiverChannel('broken')
    await broken.behave({ status: 500, echo_challenge: true })
    expect(await refusal(t, { delivery: webhook(broken.url, clientSecret()) })).toMatchObject({ code: -32027, data: { reason: 'http_5xx' } })
    expect(await listed(t)).toEqual([])
  })

  it('refuses while webhooks are switched off for the tenant (-32024), and past the subscription cap (-32025)', async () => {
    const off = await newTenant()
    expect((await admin(`/admin/tenants/${off.tenantId}`, { method: 'PATCH', json: { webhooks_enabled: false } })).status).toBe(200)
    expect(await refusal(off, { delivery: webhook(receiverChannel().url, clientSecret()) })).toMatchObject({ code: -32024 })

    const full = await newTenant()
    const { ch, secret } = await callback()
    for (let i = 0; i < 20; i++) await createWebhook(full, { url: ch.url, subscribed_to: ['message.sent'] })
    expect(await refusal(full, { delivery: webhook(ch.url, secret) })).toMatchObject({ code: -32025, data: { limit: 'subscriptions', max: 20 } })
  })

  it('lets a read key limited to accounts subscribe to message events of those accounts only', async () => {
    const t = await newTenant()
    const reader = await mintKeyWithId(t, { scope: 'read', accounts: ['custom'] })
    const { ch, secret } = await callback()
    const ok = await modernRpc(reader.key, 'events/subscribe', { name: 'message.received', delivery: webhook(ch.url, secret) })
    expect(ok.error).toBeUndefined()
    const outside = await modernRpc(reader.key, 'events/subscribe', {
      name: 'message.received',
      arguments: { account_ids: ['beta-1'] },
      delivery: webhook(ch.url, secret),
    })
    expect(outside.error).toMatchObject({ code: -32024 })
  })

  it('is removed by the sweeper a day after it lapsed, with its delivery log', async () => {
    const t = await newTenant()
    const { ch, secret } = await callback()
    const sub = await subscribe(t.key, { name: 'message.sent', delivery: webhook(ch.url, secret), ttlMs: 1000 })
    const lapsed = Date.parse(sub.refreshBefore)
    await sweepWebhooks(env, database(env.DB), lapsed + LAPSED_KEEP_MS - 1000)
    expect(await listed(t)).toHaveLength(1)
    expect((await sweepWebhooks(env, database(env.DB), lapsed + LAPSED_KEEP_MS + 1000)).prunedSubscriptions).toBeGreaterThanOrEqual(1)
    expect(await listed(t)).toEqual([])
  })

  it('answers the registered subscriptions again after they lapse and the sweeper would keep them listed', async () => {
    const t = await newTenant()
    const { ch, secret } = await callback()
    const sub = await subscribe(t.key, { name: 'message.delivered', delivery: webhook(ch.url, secret), ttlMs: 1000 })
    await until(async () => Date.now() > Date.parse(sub.refreshBefore), 'the TTL to run out')
    // Refreshing a lapsed subscription revives it under the same id, without a new challenge.
    const revived = await subscribe(t.key, { name: 'message.delivered', delivery: webhook(ch.url, secret) })
    expect(revived.id).toBe(sub.id)
    expect((await ch.log()).filter((r) => (r.json as { type?: string }).type === 'verification')).toHaveLength(1)
  })
})
