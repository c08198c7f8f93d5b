/** /admin: tenants, keys (shown once, stored as a hash, revocable), switches and plan, guarded by ADMIN_TOKEN. */
import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { apiKeys } from '../../../schema/d1'
import { sha256Hex } from '../../../worker/lib/crypto'
import { ADMIN_HEADERS, admin, body, call, newTenant } from '../helpers'
import { db } from '../state'

type TenantBody = {
  id: string
  plan: string
  status: string
  suspended_reason: string | null
  api_enabled: boolean
  webhooks_enabled: boolean
  created_at: string
}
type KeyBody = { id: string; tenant_id: string; key: string; prefix: string; created_at: string }

async function createTenant(json: unknown = {}) {
  const res = await admin('/admin/tenants', { method: 'POST', json })
  return { status: res.status, body: await body<TenantBody>(res) }
}

async function issueKey(tenantId: string) {
  const res = await admin(`/admin/tenants/${tenantId}/keys`, { method: 'POST' })
  return { status: res.status, body: await body<KeyBody>(res) }
}

describe('admin token', () => {
  it('answers 401 in the status shape without the token or with a wrong one', async () => {
    const attempts: Record<string, string>[] = [
      {},
      { Authorization: 'Bearer nope' },
      { Authorization: 'test-admin-token' },
      { 'X-API-Key': 'test-admin-token' },
    ]
    for (const headers of attempts) {
      const res = await call('/admin/tenants', { method: 'POST', headers, json: {} })
      expect(res.status).toBe(401)
      expect(await body(res)).toEqual({ success: false, error: expect.any(String), error_code: 401 })
    }
  })

  it('does not accept a tenant API key', async () => {
    const t = await newTenant()
    const res = await call('/admin/tenants', { method: 'POST', key: t.key, json: {} })
    expect(res.status).toBe(401)
  })
})

describe('POST /admin/tenants', () => {
  it('creates an active free tenant with the API and webhooks on and alpha passkey linking off', async () => {
    const r = await createTenant()
    expect(r.status).toBe(201)
    expect(r.body).toEqual({
      id: expect.stringMatching(/^ten_/),
      plan: 'free',
      status: 'active',
      suspended_reason: null,
      api_enabled: true,
      webhooks_enabled: true,
      alpha_passkey_linking: false,
      created_at: expect.stringMatching(/Z$/),
      message_retention_days: 90,
      message_retention_set: false,
      shard: 0,
      moving_to: null,
    })
  })

  it('creates one without a body too', async () => {
    const res = await call('/admin/tenants', { method: 'POST', headers: ADMIN_HEADERS })
    expect(res.status).toBe(201)
  })

  it('refuses an unknown plan with 400', async () => {
    const r = await createTenant({ plan: 'platinum' })
    expect(r.status).toBe(400)
    expect(r.body).toEqual({ success: false, error: expect.any(String), error_code: 400 })
  })
})

describe('GET /admin/tenants/{id}', () => {
  it('answers the tenant, and 404 for an unknown one', async () => {
    const t = await createTenant()
    const res = await admin(`/admin/tenants/${t.body.id}`)
    expect(res.status).toBe(200)
    expect(await body(res)).toEqual(t.body)
    const missing = await admin('/admin/tenants/ten_nope')
    expect(missing.status).toBe(404)
    expect(await body(missing)).toEqual({ success: false, error: expect.any(String), error_code: 404 })
  })
})

describe('POST /admin/tenants/{id}/keys', () => {
  it('issues svc_live_ + 40 base62 characters, shown once and stored only as its SHA-256', async () => {
    const t = await createTenant()
    const k = await issueKey(t.body.id)
    expect(k.status).toBe(201)
    expect(k.body).toEqual({
      id: expect.stringMatching(/^key_/),
      tenant_id: t.body.id,
      key: expect.stringMatching(/^svc_live_[0-9A-Za-z]{40}$/),
      prefix: k.body.key.slice(0, 13),
      created_at: expect.any(String),
    })
    const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, k.body.id))
    expect(row?.hash).toBe(await sha256Hex(k.body.key))
    expect(JSON.stringify(row)).not.toContain(k.body.key)
    expect(JSON.stringify(await body(await admin(`/admin/tenants/${t.body.id}`)))).not.toContain(k.body.key.slice(13))
  })

  it('issues a different key each time, each working on the API', async () => {
    const t = await createTenant()
    const [a, b] = [await issueKey(t.body.id), await issueKey(t.body.id)]
    expect(a.body.key).not.toBe(b.body.key)
    for (const k of [a, b]) expect((await call('/v1/usage', { key: k.body.key })).status).toBe(200)
  })

  it('answers 404 for an unknown tenant', async () => {
    expect((await issueKey('ten_nope')).status).toBe(404)
  })
})

describe('DELETE /admin/keys/{keyId}', () => {
  it('revokes the key at once, leaves the tenant’s other keys working, and 404s a second time', async () => {
    const t = await createTenant()
    const [a, b] = [await issueKey(t.body.id), await issueKey(t.body.id)]
    expect((await call('/v1/usage', { key: a.body.key })).status).toBe(200)
    const res = await admin(`/admin/keys/${a.body.id}`, { method: 'DELETE' })
    expect(res.status).toBe(200)
    expect(await body(res)).toEqual({ success: true })
    const refused = await call('/v1/usage', { key: a.body.key })
    expect(refused.status).toBe(401)
    expect(await body(refused)).toEqual({ error_code: 'unauthorized', error: expect.stringMatching(/invalid or revoked/) })
    expect((await call('/v1/usage', { key: b.body.key })).status).toBe(200)
    expect((await admin(`/admin/keys/${a.body.id}`, { method: 'DELETE' })).status).toBe(404)
  })
})

describe('PATCH /admin/tenants/{id}', () => {
  it('sets the message retention (0 = forever), shows it in usage, and returns to the default with null', async () => {
    const t = await newTenant()
    const retention = async () => (await body<{ retention: { messages_days: number } }>(await call('/v1/usage', { key: t.key }))).retention.messages_days
    expect(await retention()).toBe(90)
    const set = await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { message_retention_days: 30 } })
    expect(await body(set)).toMatchObject({ message_retention_days: 30, message_retention_set: true })
    expect(await retention()).toBe(30)
    await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { message_retention_days: 0 } })
    expect(await retention()).toBe(0)
    const reset = await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { message_retention_days: null } })
    expect(await body(reset)).toMatchObject({ message_retention_days: 90, message_retention_set: false })
    for (const bad of [-1, 1.5, 36_501, '30']) {
      const res = await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { message_retention_days: bad } })
      expect(res.status, String(bad)).toBe(400)
    }
  })

  it('switches the API off (404 on every API route, in each family’s shape) and on again', async () => {
    const t = await newTenant()
    const off = await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { api_enabled: false } })
    expect(await body(off)).toMatchObject({ api_enabled: false })
    const messaging = await call('/v1/messages', { key: t.key })
    expect(messaging.status).toBe(404)
    expect(await body(messaging)).toEqual({ error_code: 'api_not_enabled', error: expect.any(String) })
    const channel = await call('/v1/channels/custom', { key: t.key })
    expect(channel.status).toBe(404)
    expect(await body(channel)).toEqual({ success: false, error: expect.any(String), error_code: 404 })
    await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { api_enabled: true } })
    expect((await call('/v1/messages', { key: t.key })).status).toBe(200)
  })

  it('changes the webhooks switch and the plan', async () => {
    const t = await newTenant()
    const res = await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { webhooks_enabled: false, plan: 'free' } })
    expect(res.status).toBe(200)
    expect(await body(res)).toMatchObject({ webhooks_enabled: false, plan: 'free', api_enabled: true })
  })

  it('refuses an empty patch, an unknown plan and a status other than active with 400', async () => {
    const t = await newTenant()
    for (const json of [{}, { plan: 'gold' }, { status: 'suspended' }, { api_enabled: 'yes' }]) {
      const res = await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json })
      expect(res.status, JSON.stringify(json)).toBe(400)
      expect(await body(res)).toEqual({ success: false, error: expect.any(String), error_code: 400 })
    }
  })

  it('answers 404 for an unknown tenant', async () => {
    expect((await admin('/admin/tenants/ten_nope', { method: 'PATCH', json: { api_enabled: true } })).status).toBe(404)
  })
})
