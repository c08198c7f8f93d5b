/** /v1/channels/custom (spec 4.7): set, read and remove the webhook, the plan's account cap, and the inbound push's validation. */
import { describe, expect, it } from 'vitest'
import { DEFAULT_FROM_ID } from '../../../../schema/api/custom-channel'
import { channelConnections } from '../../../../schema/d1'
import { body, call, connectCustom, newTenant, pushInbound, receiverChannel, send, type TestTenant } from '../../helpers'
import { addAccount, db, eventsOf } from '../../state'
import { customAccountEvent } from '../../webhook-helpers'
import { eq } from 'drizzle-orm'

const INBOUND_URL = 'https://gateway.test/v1/channels/custom/inbound'

async function put(t: TestTenant, webhook_url: unknown) {
  const res = await call('/v1/channels/custom', { method: 'PUT', key: t.key, json: { webhook_url } })
  return { status: res.status, body: await body(res) }
}

async function state(t: TestTenant) {
  return body(await call('/v1/channels/custom', { key: t.key }))
}

describe('PUT /v1/channels/custom', () => {
  it('connects the channel at once and answers its state with the secret part of the URL masked', async () => {
    const t = await newTenant()
    const ch = receiverChannel('put')
    const r = await put(t, `${ch.url}?token=s3cret`)
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      success: true,
      account_id: 'custom',
      channel: 'custom',
      status: 'connected',
      webhook_url: `${new URL(ch.url).origin}/***`,
      inbound_url: INBOUND_URL,
      actions: false,
      connected_at: expect.stringMatching(/Z$/),
    })
    const accounts = await body<{ accounts: { id: string; status: string }[] }>(await call('/v1/accounts', { key: t.key }))
    expect(accounts.accounts).toMatchObject([{ id: 'custom', channel: 'custom', status: 'connected' }])
  })

  it('emits account.connected once, not again when the URL changes', async () => {
    const t = await newTenant()
    await put(t, receiverChannel('a').url)
    await put(t, receiverChannel('b').url)
    const events = await eventsOf(t.tenantId, 'account.connected')
    expect(events.map((e) => e.payload)).toEqual([customAccountEvent('account.connected', expect.any(String), 'connected', null)])
  })

  it('sends later messages to the new URL after a change', async () => {
    const t = await newTenant()
    const first = await connectCustom(t)
    const second = receiverChannel('second')
    await put(t, second.url)
    await send(t, { to: { external_id: 'p' }, text: 'where do I go?' })
    expect(await second.waitFor(1)).toHaveLength(1)
    expect(await first.log()).toHaveLength(0)
  })

  it('keeps the URL secret: sealed at rest, masked in every answer', async () => {
    const t = await newTenant()
    const ch = receiverChannel('secret')
    await put(t, `${ch.url}?token=hunter2`)
    const [row] = await db.select().from(channelConnections).where(eq(channelConnections.tenantId, t.tenantId))
    expect(row?.config).toMatch(/^v2\.default\./)
    expect(row?.config).not.toContain('hunter2')
    expect(JSON.stringify(await state(t))).not.toContain('hunter2')
  })

  for (const [what, url] of [
    ['plain http to a public host', 'http://bridge.example.com/hook'],
    ['a private address', 'https://10.0.0.7/hook'],
    ['a numeric-encoded private address', 'https://167772161/hook'],
    ['a link-local metadata address', 'https://169.254.169.254/latest'],
    ['a CGNAT address', 'https://100.64.1.1/'],
    ['a multicast address', 'https://224.0.0.251/'],
    ['an IPv6 link-local address', 'https://[fe80::1]/'],
    ['an IPv6 unique-local address', 'https://[fd12::1]/'],
    ['an IPv4-mapped private address', 'https://[::ffff:192.168.1.1]/'],
    ['an internal name', 'https://db.internal/hook'],
    ["the service's own host", 'https://gateway.test/v1/channels/custom/inbound'],
    ['a URL with credentials', 'https://user:pw@bridge.example.com/'],
    ['something that is not a URL', 'bridge'],
  ] as const) {
    it(`refuses ${what} with 400 in the status shape`, async () => {
      const t = await newTenant()
      const r = await put(t, url)
      expect(r.status).toBe(400)
      expect(r.body).toEqual({ success: false, error: expect.stringMatching(/^webhook_url is not allowed: /), error_code: 400 })
      expect((await state(t)).status).toBe('not_connected')
    })
  }

  it('refuses a missing or empty webhook_url with 400', async () => {
    const t = await newTenant()
    expect((await put(t, undefined)).status).toBe(400)
    expect((await put(t, '')).status).toBe(400)
  })

  it('answers 200 to every one of several concurrent first PUTs, with one account and one account.connected', async () => {
    const t = await newTenant()
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => put(t, receiverChannel(`race-${i}`).url)))
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
    expect((await body<{ accounts: unknown[] }>(await call('/v1/accounts', { key: t.key }))).accounts).toHaveLength(1)
    expect(await eventsOf(t.tenantId, 'account.connected')).toHaveLength(1)
  })

  it("answers 409 when the plan's account cap is already used by another account", async () => {
    const t = await newTenant()
    await addAccount(t.tenantId, { id: '+15550001111', channel: 'alpha_web' })
    const r = await put(t, receiverChannel('cap').url)
    expect(r.status).toBe(409)
    expect(r.body).toEqual({ success: false, error: expect.stringMatching(/1 connected account/), error_code: 409 })
    expect((await state(t)).status).toBe('not_connected')
  })

  it('does not lift a restriction when the URL changes', async () => {
    const t = await newTenant()
    await connectCustom(t)
    for (let i = 1; i <= 6; i++) await send(t, { to: { external_id: `lead${i}` }, text: 'Same words to everyone' })
    const r = await put(t, receiverChannel('after').url)
    expect(r.body.status).toBe('restricted')
  })

  it('answers 401 in the status shape without a key', async () => {
    const res = await call('/v1/channels/custom', { method: 'PUT', json: { webhook_url: 'https://bridge.example.com/' } })
    expect(res.status).toBe(401)
    expect(await body(res)).toEqual({ success: false, error: expect.any(String), error_code: 401 })
  })
})

describe('GET /v1/channels/custom', () => {
  it('answers not_connected before the webhook is set', async () => {
    const t = await newTenant()
    expect(await state(t)).toEqual({
      success: true,
      account_id: 'custom',
      channel: 'custom',
      status: 'not_connected',
      webhook_url: null,
      inbound_url: INBOUND_URL,
      actions: false,
      connected_at: null,
    })
  })

  it('shows only the origin of a URL without path or query', async () => {
    const t = await newTenant()
    const origin = new URL(receiverChannel('o').url).origin
    await put(t, `${origin}/`)
    expect((await state(t)).webhook_url).toBe(origin)
  })

  it("never shows another tenant's channel", async () => {
    const a = await newTenant()
    await connectCustom(a)
    const b = await newTenant()
    expect((await state(b)).status).toBe('not_connected')
  })

  it('answers 401 without a key', async () => {
    expect((await call('/v1/channels/custom')).status).toBe(401)
  })
})

describe('DELETE /v1/channels/custom', () => {
  it('removes the account and its URL, keeps the history, and emits account.disconnected', async () => {
    const t = await newTenant()
    await connectCustom(t)
    await pushInbound(t, { body: 'kept', fromId: 'h' })
    const res = await call('/v1/channels/custom', { method: 'DELETE', key: t.key })
    expect(res.status).toBe(200)
    expect(await body(res)).toEqual({ success: true, account_id: 'custom', status: 'removed' })
    expect(await state(t)).toMatchObject({ status: 'not_connected', webhook_url: null, connected_at: null })
    expect((await body<{ accounts: unknown[] }>(await call('/v1/accounts', { key: t.key }))).accounts).toEqual([])
    expect((await body<{ messages: { text: string }[] }>(await call('/v1/messages', { key: t.key }))).messages.map((m) => m.text)).toEqual(['kept'])
    const [event] = await eventsOf(t.tenantId, 'account.disconnected')
    expect(event?.payload).toMatchObject({ account_id: 'custom', channel: 'custom', account: { id: 'custom', status: 'disconnected', reason: 'removed' } })
  })

  it('stops replies and inbound pushes', async () => {
    const t = await newTenant()
    await connectCustom(t)
    await pushInbound(t, { body: 'hi', fromId: 'h' })
    await call('/v1/channels/custom', { method: 'DELETE', key: t.key })
    expect((await send(t, { to: { external_id: 'h' }, text: 'reply' })).body.error_code).toBe('no_connected_account')
    expect((await pushInbound(t, { body: 'again', fromId: 'h' })).status).toBe(409)
  })

  it('is idempotent', async () => {
    const t = await newTenant()
    const res = await call('/v1/channels/custom', { method: 'DELETE', key: t.key })
    expect(res.status).toBe(200)
    expect(await body(res)).toEqual({ success: true, account_id: 'custom', status: 'not_connected' })
  })

  it("does not touch another tenant's channel", async () => {
    const a = await newTenant()
    await connectCustom(a)
    const b = await newTenant()
    await call('/v1/channels/custom', { method: 'DELETE', key: b.key })
    expect((await state(a)).status).toBe('connected')
  })

  it('frees the account cap for a new connection', async () => {
    const t = await newTenant()
    await connectCustom(t)
    await call('/v1/channels/custom', { method: 'DELETE', key: t.key })
    expect((await put(t, receiverChannel('again').url)).status).toBe(200)
  })

  it('answers 401 without a key', async () => {
    expect((await call('/v1/channels/custom', { method: 'DELETE' })).status).toBe(401)
  })
})

describe('POST /v1/channels/custom/inbound', () => {
  for (const [what, customData] of [
    ['a missing body', { fromId: 'x' }],
    ['a reaction without fromId', { body: '', reaction: { messageSid: 's1', emoji: '👍' } }],
    ['an empty body without media', { body: '', fromId: 'x' }],
    ['a mediaUrl that is not a URL', { body: 'hi', fromId: 'x', mediaUrl: 'pic.jpg' }],
    ['an http mediaUrl (spec: public https)', { body: 'hi', fromId: 'x', mediaUrl: 'http://cdn.example.com/a.jpg' }],
    ['a mediaUrl on a private address', { body: 'hi', fromId: 'x', mediaUrl: 'https://192.168.0.2/a.jpg' }],
    ['a body over 4096 characters', { body: 'a'.repeat(4097), fromId: 'x' }],
    ['an empty fromId', { body: 'hi', fromId: '' }],
  ] as const) {
    it(`refuses ${what} with 400 in the status shape`, async () => {
      const t = await newTenant()
      await connectCustom(t)
      const res = await call('/v1/channels/custom/inbound', { method: 'POST', key: t.key, json: { customData } })
      expect(res.status).toBe(400)
      expect(await body(res)).toEqual({ success: false, error: expect.any(String), error_code: 400 })
    })
  }

  it('takes a push without fromId (spec 4.7 requires only body) from one default sender, whom a reply reaches', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const push = (n: number) => call('/v1/channels/custom/inbound', { method: 'POST', key: t.key, json: { customData: { body: `anon ${n}` } } })
    const first = await body<{ message_id: string; contact_id: string; duplicate: boolean }>(await push(1))
    const second = await body<{ contact_id: string }>(await push(2))
    expect(first.duplicate).toBe(false)
    expect(second.contact_id).toBe(first.contact_id)
    const message = await body<{ contact: Record<string, unknown> }>(await call(`/v1/messages/${first.message_id}`, { key: t.key }))
    expect(message.contact).toMatchObject({ id: first.contact_id, external_id: DEFAULT_FROM_ID })
    const reply = await send(t, { to: { external_id: DEFAULT_FROM_ID }, text: 'got it' })
    expect(reply.status).toBe(202)
  })

  it('refuses a request without customData', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const res = await call('/v1/channels/custom/inbound', { method: 'POST', key: t.key, json: { body: 'hi', fromId: 'x' } })
    expect(res.status).toBe(400)
  })

  it('answers 401 without a key', async () => {
    const res = await call('/v1/channels/custom/inbound', { method: 'POST', json: { customData: { body: 'hi', fromId: 'x' } } })
    expect(res.status).toBe(401)
    expect(await body(res)).toEqual({ success: false, error: expect.any(String), error_code: 401 })
  })
})
