/** /v1/keys: minting narrower keys (shown once, stored hashed, never wider), listing, revoking; expiry; accounts. */
import { eq } from 'drizzle-orm'
import { afterEach, describe, expect, it } from 'vitest'
import { apiKeys, contacts } from '../../../schema/d1'
import { sha256Hex } from '../../../worker/lib/crypto'
import { contactIdFor } from '../../../worker/lib/ids'
import { keyClock } from '../../../worker/middleware/key-scope'
import { ADMIN_TOKEN, body, call, connectCustom, newTenant, pushInbound, type TestTenant } from '../helpers'
import { adminKey } from '../safety/helpers'
import { db } from '../state'

type Minted = {
  success: true
  id: string
  key: string
  prefix: string
  scope: string
  label: string | null
  accounts: string[] | null
  expires_at: string | null
  reply_window_s: number
  approval: boolean
  parent_id: string | null
  created_at: string
}

async function mint(key: string, fields: Record<string, unknown> = {}) {
  const res = await call('/v1/keys', { method: 'POST', key, json: fields })
  return { status: res.status, body: await body<Minted & { error_code?: unknown; error?: string }>(res) }
}

afterEach(() => {
  keyClock.now = () => Date.now()
})

describe('POST /v1/keys', () => {
  it('mints a narrower key from a full key, shown once and stored as a hash', async () => {
    const t = await newTenant()
    const res = await mint(t.key, { scope: 'reply', label: 'support agent', reply_window_s: 3600 })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      success: true,
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^svc_live_[0-9A-Za-z]{40}$/),
      prefix: res.body.key.slice(0, 13),
      label: 'support agent',
      scope: 'reply',
      accounts: null,
      expires_at: null,
      reply_window_s: 3600,
      approval: false,
      parent_id: t.keyId,
      created_at: expect.any(String),
    })
    const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, res.body.id))
    expect(row?.hash).toBe(await sha256Hex(res.body.key))
    expect(JSON.stringify(row)).not.toContain(res.body.key)
    expect((await call('/v1/usage', { key: res.body.key })).status).toBe(200)
    const listed = await body<{ keys: Minted[] }>(await call('/v1/keys', { key: t.key }))
    expect(JSON.stringify(listed)).not.toContain(res.body.key.slice(13))
    expect(listed.keys.map((k) => k.id)).toEqual([res.body.id, t.keyId])
  })

  it('mints only with the owner’s key: not from a read or reply key, nor a full key with accounts, an expiry or approval', async () => {
    const t = await newTenant()
    const read = await mint(t.key, { scope: 'read' })
    const reply = await mint(t.key, { scope: 'reply' })
    const narrowed = await Promise.all(
      [{ accounts: ['custom'] }, { expires_at: new Date(Date.now() + 3600_000).toISOString() }, { approval: true }].map((fields) => mint(t.key, fields))
    )
    for (const from of [read, reply, ...narrowed]) {
      expect(from.status).toBe(201)
      for (const scope of ['read', 'reply', 'full']) {
        const res = await mint(from.body.key, { scope })
        expect(res.status).toBe(403)
        // key_scope names the owner's key; a key with an account list is refused for reaching every account.
        expect(res.body).toEqual({
          success: false,
          error: expect.stringMatching(/the owner’s key \(full, every account, no approval, no expiry\) may|concerns every account/),
          error_code: 403,
        })
      }
    }
    // What the owner mints keeps the fields it was given, and names the owner's key as its parent.
    const child = await mint(t.key, { scope: 'read', accounts: ['custom'], approval: true })
    expect(child.body).toMatchObject({ scope: 'read', accounts: ['custom'], approval: true, parent_id: t.keyId })
  })

  it('answers 400 for an unknown field or scope', async () => {
    const t = await newTenant()
    expect((await mint(t.key, { scope: 'admin' })).status).toBe(400)
    expect((await mint(t.key, { scopes: 'read' })).status).toBe(400)
  })

  it('answers 401 without a key', async () => {
    expect((await call('/v1/keys', { method: 'POST', json: {} })).status).toBe(401)
  })
})

describe('DELETE /v1/keys/{keyId}', () => {
  it('revokes a key of the tenant at once and 404s another tenant’s key', async () => {
    const [a, b] = [await newTenant(), await newTenant()]
    const minted = await mint(a.key, { scope: 'read' })
    expect((await call(`/v1/keys/${minted.body.id}`, { method: 'DELETE', key: b.key })).status).toBe(404)
    expect((await call('/v1/usage', { key: minted.body.key })).status).toBe(200)
    expect((await call(`/v1/keys/${minted.body.id}`, { method: 'DELETE', key: a.key })).status).toBe(200)
    expect((await call('/v1/usage', { key: minted.body.key })).status).toBe(401)
    expect((await call(`/v1/keys/${minted.body.id}`, { method: 'DELETE', key: a.key })).status).toBe(404)
    expect((await body<{ keys: { id: string }[] }>(await call('/v1/keys', { key: b.key }))).keys.map((k) => k.id)).toEqual([b.keyId])
  })
})

describe('expiry', () => {
  it('answers 403 key_expired from the expiry instant on (injected clock), in each family’s shape', async () => {
    const t = await newTenant()
    const at = Date.now() + 3600_000
    const minted = await mint(t.key, { scope: 'read', expires_at: new Date(at).toISOString() })
    keyClock.now = () => at - 1
    expect((await call('/v1/usage', { key: minted.body.key })).status).toBe(200)
    keyClock.now = () => at
    const messaging = await call('/v1/usage', { key: minted.body.key })
    expect(messaging.status).toBe(403)
    expect(await body(messaging)).toEqual({ error_code: 'key_expired', error: expect.stringContaining('expired') })
    const status = await call('/v1/webhooks', { key: minted.body.key })
    expect(status.status).toBe(403)
    expect(await body(status)).toEqual({ success: false, error: expect.stringContaining('expired'), error_code: 403 })
  })

  it('refuses an expired key at /mcp too', async () => {
    const t = await newTenant()
    const minted = await adminKey(t.tenantId, { expires_at: new Date(Date.now() + 1000).toISOString() })
    keyClock.now = () => Date.now() + 2000
    const res = await call('/mcp', {
      method: 'POST',
      headers: { 'X-API-Key': minted.key, Accept: 'application/json, text/event-stream' },
      json: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    })
    expect(res.status).toBe(403)
    expect(await body(res)).toMatchObject({ error: { data: { error_code: 'key_expired' } } })
  })
})

describe('accounts a key may use', () => {
  async function customWithFriend(): Promise<TestTenant> {
    const t = await newTenant()
    await connectCustom(t)
    await pushInbound(t, { body: 'hello', fromId: 'friend' })
    return t
  }

  it('refuses a send from, and hides, an account the key does not list', async () => {
    const t = await customWithFriend()
    const other = await mint(t.key, { accounts: ['+15550001'] })
    const res = await call('/v1/messages', { method: 'POST', key: other.body.key, json: { to: { external_id: 'friend' }, text: 'hi' } })
    expect(res.status).toBe(403)
    expect(await body(res)).toEqual({ error_code: 'key_account', error: expect.stringContaining('custom') })
    expect(await body(await call('/v1/accounts', { key: other.body.key }))).toEqual({ accounts: [] })
    expect((await body<{ messages: unknown[] }>(await call('/v1/messages', { key: other.body.key }))).messages).toEqual([])
    expect((await call('/v1/messages?account_id=custom', { key: other.body.key })).status).toBe(403)
    expect((await call('/v1/channels/custom', { key: other.body.key })).status).toBe(403)
    const own = await mint(t.key, { accounts: ['custom'] })
    expect((await call('/v1/messages', { method: 'POST', key: own.body.key, json: { to: { external_id: 'friend' }, text: 'hi' } })).status).toBe(202)
    expect((await body<{ accounts: unknown[] }>(await call('/v1/accounts', { key: own.body.key }))).accounts).toHaveLength(1)
  })
})

describe('reply keys', () => {
  it('send to a person who wrote within the window, and to nobody else', async () => {
    const t = await newTenant()
    await connectCustom(t)
    await pushInbound(t, { body: 'hello', fromId: 'friend' })
    const reply = await mint(t.key, { scope: 'reply', reply_window_s: 3600 })
    const to = (id: string) => call('/v1/messages', { method: 'POST', key: reply.body.key, json: { to: { external_id: id }, text: 'hi' } })
    expect((await to('friend')).status).toBe(202)
    const stranger = await to('stranger')
    expect(stranger.status).toBe(403)
    expect(await body(stranger)).toEqual({ error_code: 'key_scope', error: expect.stringContaining('never wrote') })
    // The friend's last message moves out of the one-hour window.
    const id = await contactIdFor(t.tenantId, 'custom', { kind: 'external', value: 'friend' })
    await db
      .update(contacts)
      .set({ lastInboundAt: Date.now() - 3600_000 - 5000 })
      .where(eq(contacts.id, id))
    const late = await to('friend')
    expect(late.status).toBe(403)
    expect(await body(late)).toEqual({ error_code: 'key_scope', error: expect.stringContaining('last 1 h') })
  })
})

describe('an empty body', () => {
  it('mints a copy of the calling key, and the admin API a full key, when JSON is announced but nothing sent', async () => {
    const t = await newTenant()
    const res = await call('/v1/keys', { method: 'POST', key: t.key, headers: { 'Content-Type': 'application/json' } })
    expect(res.status).toBe(201)
    expect(await body(res)).toMatchObject({ scope: 'full', accounts: null })
    const adminRes = await call(`/admin/tenants/${t.tenantId}/keys`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    })
    expect(adminRes.status).toBe(201)
    expect(Object.keys(await body(adminRes)).sort()).toEqual(['created_at', 'id', 'key', 'prefix', 'tenant_id'])
  })

  it('is no body on the other admin calls whose body is optional: a tenant, a relay token, a reseal page', async () => {
    const headers = { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' }
    const tenant = await call('/admin/tenants', { method: 'POST', headers })
    expect(tenant.status).toBe(201)
    expect(await body(tenant)).toMatchObject({ id: expect.any(String) })
    const relay = await call('/admin/relays', { method: 'POST', headers })
    expect(relay.status).toBe(201)
    expect(await body(relay)).toMatchObject({ token: expect.stringMatching(/^rly_/) })
    const reseal = await call('/admin/secrets/reseal', { method: 'POST', headers })
    expect(reseal.status).toBe(200)
  })
})
