/** GET /relay/connect and /admin/relays: relay tokens, auth before the upgrade, live state, revocation. */
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { admin, body, call, newTenant } from '../helpers'
import { FakeRelay, issueRelay, relayConnect } from '../relay-helpers'

describe('GET /relay/connect', () => {
  it('refuses a missing token with 401 before any upgrade', async () => {
    const res = await relayConnect(null)
    expect(res.status).toBe(401)
    expect(res.webSocket).toBeNull()
    expect(await body(res)).toEqual({ success: false, error: expect.any(String), error_code: 401 })
  })

  it('refuses a wrong token with 401', async () => {
    const res = await relayConnect('rly_not-a-real-token-at-all-0000000000000')
    expect(res.status).toBe(401)
    expect(res.webSocket).toBeNull()
  })

  it('refuses an API key used as a relay token', async () => {
    const t = await newTenant()
    expect((await relayConnect(t.key)).status).toBe(401)
  })

  it('answers 426 to a valid token without a WebSocket upgrade', async () => {
    const { token } = await issueRelay()
    const res = await relayConnect(token, {})
    expect(res.status).toBe(426)
  })

  it('upgrades with a valid token and welcomes the relay with its lease settings', async () => {
    const { id, token } = await issueRelay()
    const relay = await FakeRelay.open(token, { hello: false })
    relay.send({
      type: 'hello',
      protocol: 1,
      instance: relay.instance,
      version: '1.2.3',
      driver: 'sim',
      channels: ['alpha_web'],
      sessions: [],
      draining: false,
    })
    const welcome = await relay.next('welcome')
    expect(welcome).toEqual({ type: 'welcome', relayId: id, tenantId: null, leaseMs: 10_000, heartbeatMs: 3_000, batches: true })
    relay.close()
  })

  it('answers the heartbeat with pong', async () => {
    const { token } = await issueRelay()
    const relay = await FakeRelay.open(token)
    relay.ws.send('{"type":"ping"}')
    await expect(relay.next('pong')).resolves.toEqual({ type: 'pong' })
    relay.close()
  })

  it('rejects a frame that does not parse, naming its id', async () => {
    const { token } = await issueRelay()
    const relay = await FakeRelay.open(token)
    relay.ws.send(JSON.stringify({ type: 'inbound', id: 'bad-1', sid: 'x' }))
    await expect(relay.next('reject')).resolves.toEqual({ type: 'reject', id: 'bad-1', sid: null, reason: 'invalid' })
    relay.close()
  })
})

describe('POST /admin/relays', () => {
  it('shows the token once and stores only its hash', async () => {
    const res = await admin('/admin/relays', { method: 'POST', json: { name: 'vps-1' } })
    expect(res.status).toBe(201)
    const r = await body<{ id: string; token: string; prefix: string; tenant_id: string | null; name: string }>(res)
    expect(r.token).toMatch(/^rly_[0-9A-Za-z]{40}$/)
    expect(r).toMatchObject({ tenant_id: null, name: 'vps-1', prefix: r.token.slice(0, 8) })
    const row = await env.DB.prepare('SELECT hash FROM relays WHERE id = ?').bind(r.id).first<{ hash: string }>()
    expect(row?.hash).toMatch(/^[0-9a-f]{64}$/)
    expect(row?.hash).not.toContain(r.token)
  })

  it('scopes a token to a tenant that exists', async () => {
    const t = await newTenant()
    const res = await admin('/admin/relays', { method: 'POST', json: { tenant_id: t.tenantId } })
    expect(res.status).toBe(201)
    expect((await body(res)).tenant_id).toBe(t.tenantId)
  })

  it('answers 404 for an unknown tenant', async () => {
    const res = await admin('/admin/relays', { method: 'POST', json: { tenant_id: 'ten_nope' } })
    expect(res.status).toBe(404)
  })

  it('needs the admin token', async () => {
    const res = await call('/admin/relays', { method: 'POST', json: {} })
    expect(res.status).toBe(401)
    expect(await body(res)).toMatchObject({ success: false, error_code: 401 })
  })
})

describe('GET /admin/relays', () => {
  it('lists each token with its live links', async () => {
    const { id, token } = await issueRelay()
    const relay = await FakeRelay.open(token)
    const list = await body<{ relays: Array<{ id: string; connected: boolean; links: Array<{ instance: string; driver: string }> }> }>(
      await admin('/admin/relays')
    )
    const mine = list.relays.find((r) => r.id === id)
    expect(mine).toMatchObject({ connected: true, links: [{ instance: relay.instance, driver: 'sim' }] })
    relay.close()
  })
})

describe('DELETE /admin/relays/{relayId}', () => {
  it('revokes the token and closes its live links with 4003', async () => {
    const { id, token } = await issueRelay()
    const relay = await FakeRelay.open(token)
    const res = await admin(`/admin/relays/${id}`, { method: 'DELETE' })
    expect(res.status).toBe(200)
    expect(await body(res)).toEqual({ success: true, id, links_closed: 1 })
    expect((await relay.waitClosed()).code).toBe(4003)
    expect((await relayConnect(token)).status).toBe(401)
  })

  it('answers 404 for an unknown or already revoked token', async () => {
    const { id } = await issueRelay()
    await admin(`/admin/relays/${id}`, { method: 'DELETE' })
    expect((await admin(`/admin/relays/${id}`, { method: 'DELETE' })).status).toBe(404)
  })
})
