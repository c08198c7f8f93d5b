/**
 * Idempotency-Key (docs/idempotency.md): a retry gets the first answer byte for byte and acts once; the same key with
 * another request is 422, a key whose first request is still running is 409 with Retry-After; answers live 24 h
 * per tenant and key, and only answers that decided something are kept.
 */
import { and, eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { idempotencyKeys, messages } from '../../../schema/d1'
import { IDEMPOTENCY_TTL_MS, pruneIdempotencyKeys } from '../../../worker/db/idempotency'
import { sha256Hex } from '../../../worker/lib/crypto'
import { canonicalJson, requestFingerprint } from '../../../worker/middleware/idempotency'
import { ADMIN_TOKEN, body, call, connectCustom, newTenant, ORIGIN, pushInbound, type TestTenant } from '../helpers'
import { db } from '../state'
import { callTool, rpc } from '../mcp/rpc'
import idempotencyDoc from '../../../docs/idempotency.md?raw'

const reply = { to: { external_id: 'friend' }, text: 'On my way' }

async function customTenant() {
  const t = await newTenant()
  const receiver = await connectCustom(t)
  await pushInbound(t, { body: 'hello', fromId: 'friend' })
  return { ...t, receiver }
}

function sendWithKey(t: TestTenant, key: string, json: unknown, apiKey = t.key) {
  return call('/v1/messages', { method: 'POST', key: apiKey, json, headers: { 'Idempotency-Key': key } })
}

async function outbound(tenantId: string) {
  return db
    .select({ id: messages.id, text: messages.text })
    .from(messages)
    .where(and(eq(messages.tenantId, tenantId), eq(messages.direction, 'outbound')))
}

async function keyRow(tenantId: string, key: string) {
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.tenantId, tenantId), eq(idempotencyKeys.keyHash, await sha256Hex(key))))
  return row
}

describe('Idempotency-Key on POST /v1/messages', () => {
  it('replays the first answer byte for byte, marked Idempotent-Replayed, and sends once', async () => {
    const t = await customTenant()
    const first = await sendWithKey(t, 'order-1001', reply)
    const firstText = await first.text()
    expect(first.status).toBe(202)
    expect(first.headers.get('Idempotent-Replayed')).toBeNull()
    const again = await sendWithKey(t, 'order-1001', reply)
    expect(again.status).toBe(202)
    expect(again.headers.get('Idempotent-Replayed')).toBe('true')
    expect(again.headers.get('Content-Type')).toBe(first.headers.get('Content-Type'))
    expect(await again.text()).toBe(firstText)
    expect(await outbound(t.tenantId)).toHaveLength(1)
    // One upstream send: the custom channel's webhook got the reply once.
    const received = await t.receiver.waitFor(1)
    expect(received.filter((r) => (r.json as { body?: string }).body === 'On my way')).toHaveLength(1)
  })

  it('treats the same body with other key order and spacing as the same request', async () => {
    const t = await customTenant()
    const first = await body<{ message_id: string }>(await sendWithKey(t, 'k-order', { text: 'Hi', to: { external_id: 'friend' } }))
    const raw = '{ "to" : {"external_id":"friend"},\n "text":"Hi" }'
    const again = await call('/v1/messages', {
      method: 'POST',
      key: t.key,
      body: raw,
      headers: { 'Idempotency-Key': 'k-order', 'Content-Type': 'application/json' },
    })
    expect(again.headers.get('Idempotent-Replayed')).toBe('true')
    expect((await body<{ message_id: string }>(again)).message_id).toBe(first.message_id)
  })

  it('refuses the same key with another body with 422 idempotency_key_reused and sends nothing more', async () => {
    const t = await customTenant()
    expect((await sendWithKey(t, 'k-reuse', reply)).status).toBe(202)
    const other = await sendWithKey(t, 'k-reuse', { ...reply, text: 'Something else' })
    expect(other.status).toBe(422)
    expect(await body(other)).toEqual({ error_code: 'idempotency_key_reused', error: expect.stringContaining('different request') })
    expect(await outbound(t.tenantId)).toHaveLength(1)
  })

  it('refuses the same key from another API key of the tenant (an answer is never shown to another key)', async () => {
    const t = await customTenant()
    const second = await body<{ key: string }>(
      await call(`/admin/tenants/${t.tenantId}/keys`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })
    )
    expect((await sendWithKey(t, 'k-shared', reply)).status).toBe(202)
    const other = await sendWithKey(t, 'k-shared', reply, second.key)
    expect(other.status).toBe(422)
    expect(await outbound(t.tenantId)).toHaveLength(1)
  })

  it('answers 409 idempotency_key_in_progress with Retry-After while the first request runs', async () => {
    const t = await customTenant()
    const keyId = t.keyId
    const fingerprint = await requestFingerprint('POST', `${ORIGIN}/v1/messages`, keyId, JSON.stringify(reply))
    const now = Date.now()
    await db.insert(idempotencyKeys).values({
      tenantId: t.tenantId,
      keyHash: await sha256Hex('k-running'),
      fingerprint,
      claim: 'idc_first',
      lockedUntil: now + 30_000,
      expiresAt: now + IDEMPOTENCY_TTL_MS,
    })
    const res = await sendWithKey(t, 'k-running', reply)
    expect(res.status).toBe(409)
    expect(res.headers.get('Retry-After')).toBe('1')
    expect(await body(res)).toEqual({ error_code: 'idempotency_key_in_progress', error: expect.any(String), retry_after_s: 1 })
    expect(await outbound(t.tenantId)).toHaveLength(0)
  })

  it('runs the request again once a first request that died has let its lease lapse', async () => {
    const t = await customTenant()
    const fingerprint = await requestFingerprint('POST', `${ORIGIN}/v1/messages`, t.keyId, JSON.stringify(reply))
    const now = Date.now()
    await db.insert(idempotencyKeys).values({
      tenantId: t.tenantId,
      keyHash: await sha256Hex('k-died'),
      fingerprint,
      claim: 'idc_dead',
      lockedUntil: now - 1,
      expiresAt: now + IDEMPOTENCY_TTL_MS,
    })
    expect((await sendWithKey(t, 'k-died', reply)).status).toBe(202)
    expect(await outbound(t.tenantId)).toHaveLength(1)
    // …but a different request may not take a dead request's key.
    await db.insert(idempotencyKeys).values({
      tenantId: t.tenantId,
      keyHash: await sha256Hex('k-died-2'),
      fingerprint,
      claim: 'idc_dead2',
      lockedUntil: now - 1,
      expiresAt: now + IDEMPOTENCY_TTL_MS,
    })
    expect((await sendWithKey(t, 'k-died-2', { ...reply, text: 'other' })).status).toBe(422)
  })

  it('forgets an answer after 24 hours: the same key then sends again', async () => {
    const t = await customTenant()
    const first = await body<{ message_id: string }>(await sendWithKey(t, 'k-expiry', reply))
    const row = await keyRow(t.tenantId, 'k-expiry')
    expect(row?.expiresAt).toBeGreaterThan(Date.now() + IDEMPOTENCY_TTL_MS - 60_000)
    await db
      .update(idempotencyKeys)
      .set({ expiresAt: Date.now() - 1 })
      .where(and(eq(idempotencyKeys.tenantId, t.tenantId), eq(idempotencyKeys.keyHash, await sha256Hex('k-expiry'))))
    const again = await sendWithKey(t, 'k-expiry', reply)
    expect(again.headers.get('Idempotent-Replayed')).toBeNull()
    expect((await body<{ message_id: string }>(again)).message_id).not.toBe(first.message_id)
    expect(await outbound(t.tenantId)).toHaveLength(2)
  })

  it('keeps keys apart per tenant', async () => {
    const [a, b] = await Promise.all([customTenant(), customTenant()])
    const ra = await body<{ message_id: string }>(await sendWithKey(a, 'same-key', reply))
    const resB = await sendWithKey(b, 'same-key', reply)
    expect(resB.headers.get('Idempotent-Replayed')).toBeNull()
    expect((await body<{ message_id: string }>(resB)).message_id).not.toBe(ra.message_id)
    expect(await outbound(a.tenantId)).toHaveLength(1)
    expect(await outbound(b.tenantId)).toHaveLength(1)
  })

  it('sends once when two requests with the same key race', async () => {
    const t = await customTenant()
    const answers = await Promise.all([sendWithKey(t, 'k-race', reply), sendWithKey(t, 'k-race', reply)])
    const statuses = answers.map((r) => r.status).sort()
    expect([
      [202, 202],
      [202, 409],
    ]).toContainEqual(statuses)
    expect(await outbound(t.tenantId)).toHaveLength(1)
  })

  it('keeps a refusal that decided the request, and replays it', async () => {
    const t = await customTenant()
    const first = await sendWithKey(t, 'k-400', { to: { external_id: 'friend' }, text: '' })
    expect(first.status).toBe(400)
    const again = await sendWithKey(t, 'k-400', { to: { external_id: 'friend' }, text: '' })
    expect(again.status).toBe(400)
    expect(again.headers.get('Idempotent-Replayed')).toBe('true')
  })

  it('does not keep a 429: the key is free and the same request goes through once the limit allows', async () => {
    const t = await customTenant()
    for (let i = 0; i < 3; i++) expect((await sendWithKey(t, `k-loop-${i}`, { ...reply, text: `m${i}` })).status).toBe(202)
    const refused = await sendWithKey(t, 'k-loop-3', { ...reply, text: 'm3' })
    expect(refused.status).toBe(429)
    expect((await body(refused)).error_code).toBe('loop_guard')
    expect(await keyRow(t.tenantId, 'k-loop-3')).toBeUndefined()
    await pushInbound(t, { body: 'go on', fromId: 'friend' })
    const retried = await sendWithKey(t, 'k-loop-3', { ...reply, text: 'm3' })
    expect(retried.status).toBe(202)
    expect(retried.headers.get('Idempotent-Replayed')).toBeNull()
  })

  it('refuses a key that is empty, too long or not visible ASCII with 400 invalid_idempotency_key', async () => {
    const t = await customTenant()
    for (const bad of ['', 'x'.repeat(256), 'with space', 'caf\u00e9']) {
      const res = await call('/v1/messages', { method: 'POST', key: t.key, json: reply, headers: { 'Idempotency-Key': bad } })
      expect(res.status, bad).toBe(400)
      expect((await body(res)).error_code).toBe('invalid_idempotency_key')
    }
    expect((await sendWithKey(t, 'x'.repeat(255), reply)).status).toBe(202)
  })

  it('keeps the answer sealed and the key only as a hash', async () => {
    const t = await customTenant()
    const first = await body<{ message_id: string }>(await sendWithKey(t, 'k-sealed', reply))
    const row = await keyRow(t.tenantId, 'k-sealed')
    expect(row?.status).toBe(202)
    expect(row?.response).toMatch(/^v2\./)
    expect(row?.response).not.toContain(first.message_id)
    expect(JSON.stringify(row)).not.toContain('k-sealed')
  })

  it('is ignored on a request without the header', async () => {
    const t = await customTenant()
    const a = await call('/v1/messages', { method: 'POST', key: t.key, json: reply })
    const b = await call('/v1/messages', { method: 'POST', key: t.key, json: reply })
    expect((await body<{ message_id: string }>(a)).message_id).not.toBe((await body<{ message_id: string }>(b)).message_id)
    expect(await outbound(t.tenantId)).toHaveLength(2)
  })
})

describe('Idempotency-Key on POST /v1/webhooks (the status error family)', () => {
  it('replays the created subscription with its signing secret, and answers 422 in the status shape for another body', async () => {
    const t = await newTenant()
    const hook = { url: 'https://hooks.example.com/in', subscribed_to: ['message.received'], name: 'crm', generate_signing_secret: true }
    const headers = { 'Idempotency-Key': 'hook-1' }
    const first = await call('/v1/webhooks', { method: 'POST', key: t.key, json: hook, headers })
    expect(first.status).toBe(201)
    const firstText = await first.text()
    const again = await call('/v1/webhooks', { method: 'POST', key: t.key, json: hook, headers })
    expect(again.status).toBe(201)
    expect(await again.text()).toBe(firstText)
    const list = await body<{ webhooks: unknown[] }>(await call('/v1/webhooks', { key: t.key }))
    expect(list.webhooks).toHaveLength(1)
    const other = await call('/v1/webhooks', { method: 'POST', key: t.key, json: { ...hook, name: 'other' }, headers })
    expect(other.status).toBe(422)
    expect(await body(other)).toEqual({ success: false, error: expect.any(String), error_code: 422 })
  })
})

describe('Idempotency-Key on POST /v1/keys', () => {
  it('mints one key: the retry gets the same key back, and the tenant lists one more key, not two', async () => {
    const t = await newTenant()
    const listed = async () => (await body<{ keys: unknown[] }>(await call('/v1/keys', { key: t.key }))).keys.length
    const before = await listed()
    const headers = { 'Idempotency-Key': 'mint-1' }
    const mint = { scope: 'reply', label: 'agent' }
    const first = await call('/v1/keys', { method: 'POST', key: t.key, json: mint, headers })
    expect(first.status).toBe(201)
    const firstText = await first.text()
    const again = await call('/v1/keys', { method: 'POST', key: t.key, json: mint, headers })
    expect(again.headers.get('Idempotent-Replayed')).toBe('true')
    expect(await again.text()).toBe(firstText)
    expect(await listed()).toBe(before + 1)
    const stored = await keyRow(t.tenantId, 'mint-1')
    expect(stored?.response).not.toContain((JSON.parse(firstText) as { key: string }).key)
  })
})

describe('canonicalJson', () => {
  it('sorts keys at every level and keeps arrays in order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}')
  })
})

describe('pruneIdempotencyKeys (the cron step)', () => {
  it('deletes expired keys and keeps live ones', async () => {
    const t = await newTenant()
    const now = Date.now()
    await db.insert(idempotencyKeys).values([
      { tenantId: t.tenantId, keyHash: 'old', fingerprint: 'f', claim: 'c1', status: 202, response: 'x', expiresAt: now - 1 },
      { tenantId: t.tenantId, keyHash: 'live', fingerprint: 'f', claim: 'c2', status: 202, response: 'x', expiresAt: now + 60_000 },
    ])
    expect(await pruneIdempotencyKeys(db, now)).toBeGreaterThanOrEqual(1)
    const left = await db.select({ k: idempotencyKeys.keyHash }).from(idempotencyKeys).where(eq(idempotencyKeys.tenantId, t.tenantId))
    expect(left.map((r) => r.k)).toEqual(['live'])
  })
})

/** `POST /messages`-style operations (relative to /v1) whose OpenAPI entry has the Idempotency-Key header. */
async function declaringOperations(): Promise<string[]> {
  const doc = await body<{ paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>> }>(await call('/v1/openapi.json'))
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).flatMap(([method, op]) =>
      op.parameters?.some((p) => p.in === 'header' && p.name === 'Idempotency-Key') ? [`${method.toUpperCase()} ${path}`] : []
    )
  )
}

describe('which routes take Idempotency-Key', () => {
  it('docs/idempotency.md lists exactly the routes that declare it', async () => {
    const declaring = (await declaringOperations()).map((op) => op.replace(' ', ' /v1'))
    const section = /<!-- checked:idempotent-routes[^>]*-->([\s\S]*?)<!-- \/checked:idempotent-routes -->/.exec(idempotencyDoc)?.[1] ?? ''
    const listed = [...section.matchAll(/^\| `(POST \/v1\/[^`]+)` \|/gm)].map((m) => m[1]!)
    expect(listed.sort()).toEqual(declaring.sort())
  })

  it('every creating POST declares it in the OpenAPI document, and nothing else does', async () => {
    expect((await declaringOperations()).sort()).toEqual(
      [
        'POST /messages',
        'POST /webhooks',
        'POST /webhooks/{webhookId}/replay',
        'POST /keys',
        'POST /channels/custom/inbound',
        'POST /channels/alpha-web/connections',
        'POST /channels/beta/connect',
        'POST /channels/sms/twilio',
        'POST /channels/sms/android-gateway',
        'POST /channels/meta/connect',
        'POST /channels/meta/pages/select',
      ].sort()
    )
  })

  it('replays a custom-channel push, which stores the message once', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const push = { customData: { body: 'Is the shop open?', fromId: 'user-7' } }
    const headers = { 'Idempotency-Key': 'push-1' }
    const first = await call('/v1/channels/custom/inbound', { method: 'POST', key: t.key, json: push, headers })
    const again = await call('/v1/channels/custom/inbound', { method: 'POST', key: t.key, json: push, headers })
    expect(again.headers.get('Idempotent-Replayed')).toBe('true')
    expect(await again.text()).toBe(await first.text())
    const stored = await db.select({ id: messages.id }).from(messages).where(eq(messages.tenantId, t.tenantId))
    expect(stored).toHaveLength(1)
  })

  it('ignores the header on a route that does not declare it', async () => {
    const t = await newTenant()
    const receiver = await connectCustom(t)
    const headers = { 'Idempotency-Key': 'put-1' }
    const first = await call('/v1/channels/custom', { method: 'PUT', key: t.key, json: { webhook_url: receiver.url }, headers })
    expect(first.status).toBe(200)
    expect(first.headers.get('Idempotent-Replayed')).toBeNull()
    expect(await keyRow(t.tenantId, 'put-1')).toBeUndefined()
  })
})

describe('MCP: idempotency_key on the tools of creating routes', () => {
  it('is an argument of exactly the tools whose route declares the header', async () => {
    const t = await newTenant()
    const list = await rpc(t.key, 'tools/list')
    const tools = (list.result as { tools: { name: string; inputSchema: { properties?: Record<string, unknown> } }[] }).tools
    const taking = tools.filter((tool) => tool.inputSchema.properties && 'idempotency_key' in tool.inputSchema.properties).map((tool) => tool.name)
    expect(taking.sort()).toEqual(
      [
        'send_message',
        'create_webhook',
        'replay_webhook',
        'push_custom_channel_message',
        'connect_alpha',
        'connect_beta',
        'connect_sms',
        'connect_android_sms',
        'connect_social_inbox',
        'select_page',
      ].sort()
    )
  })

  it('sends once when send_message is called again with the same idempotency_key, and answers the first result', async () => {
    const t = await customTenant()
    const args = { body: reply, idempotency_key: 'mcp-send-1' }
    const first = await callTool(t.key, 'send_message', args)
    const again = await callTool(t.key, 'send_message', args)
    expect(first.status).toBe(202)
    expect(again.text).toBe(first.text)
    expect(await outbound(t.tenantId)).toHaveLength(1)
    // The tool and REST share the key: the REST retry of the same request is a replay too.
    const rest = await sendWithKey(t, 'mcp-send-1', reply)
    expect(rest.headers.get('Idempotent-Replayed')).toBe('true')
    const other = await callTool(t.key, 'send_message', { body: { ...reply, text: 'else' }, idempotency_key: 'mcp-send-1' })
    expect(other.status).toBe(422)
    expect(other.json).toMatchObject({ error_code: 'idempotency_key_reused' })
  })
})
