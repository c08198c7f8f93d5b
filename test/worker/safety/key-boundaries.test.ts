/**
 * The probes of issue 30, each of which worked before and must now fail: an approval key that tries to obtain or use
 * an approval token, or to fake a first contact with a custom-channel push; a key limited to one account reaching
 * another (channels, media, webhooks, keys); HEAD and requests no route answers slipping past the check. Plus the
 * rule that approval links reach only destinations the owner configured, old subscriptions included.
 */
import { and, eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { auditLog, webhooks } from '../../../schema/d1'
import { body, call, connectCustom, newTenant, pushInbound, receiverChannel, type TestTenant, type WireMessageBody } from '../helpers'
import { events } from '../mcp/events-helpers'
import { callTool } from '../mcp/rpc'
import { addAccount, db } from '../state'
import { createWebhook, until } from '../webhook-helpers'
import { adminKey, storedImage } from './helpers'

const sendAs = (key: string, externalId: string, text: string) => call('/v1/messages', { method: 'POST', key, json: { to: { external_id: externalId }, text } })

async function statusOf(t: TestTenant, id: string): Promise<string> {
  return (await body<WireMessageBody>(await call(`/v1/messages/${id}`, { key: t.key }))).status
}

describe('an approval key cannot approve its own messages', () => {
  async function setup() {
    const t = await newTenant()
    await connectCustom(t, 'bridge')
    const agent = await adminKey(t.tenantId, { approval: true, label: 'outreach agent' })
    return { t, agent }
  }

  it('cannot subscribe to, redirect, replay, test or re-sign a webhook, so no approval link reaches it', async () => {
    const { t, agent } = await setup()
    const mine = receiverChannel('agent-hooks')
    const create = await call('/v1/webhooks', { method: 'POST', key: agent.key, json: { url: mine.url, subscribed_to: ['message.approval_required'] } })
    expect(create.status).toBe(403)
    expect(await body(create)).toEqual({ success: false, error: expect.stringContaining('the owner’s key'), error_code: 403 })
    const owners = receiverChannel('owner-hooks')
    await createWebhook(t, { name: 'owner', url: owners.url, subscribed_to: ['message.approval_required'] })
    const attempts: Array<[string, string, unknown]> = [
      ['PUT', '/v1/webhooks/owner', { url: mine.url }],
      ['POST', '/v1/webhooks/owner/test', { event: 'message.approval_required' }],
      ['POST', '/v1/webhooks/owner/replay', { since: new Date(Date.now() - 60_000).toISOString() }],
      ['POST', '/v1/webhooks/owner/reenable', undefined],
      ['GET', '/v1/webhooks/owner/signing-secret', undefined],
      ['POST', '/v1/webhooks/owner/signing-secret', undefined],
      ['DELETE', '/v1/webhooks/owner', undefined],
    ]
    for (const [method, path, json] of attempts) {
      const res = await call(path, { method, key: agent.key, json })
      expect(res.status, `${method} ${path}`).toBe(403)
    }
    const { message_id: id } = await body<{ message_id: string }>(await sendAs(agent.key, 'stranger', 'Hello there'))
    expect(await statusOf(t, id)).toBe('awaiting_approval')
    const [delivery] = await owners.waitFor(1)
    expect(delivery?.headers['x-webhook-event']).toBe('message.approval_required')
    expect(await mine.log()).toEqual([])
    // The REST decision and the MCP tools are the owner's too.
    for (const decision of ['approve', 'reject']) {
      const res = await call(`/v1/messages/${id}/${decision}`, { method: 'POST', key: agent.key })
      expect(res.status).toBe(403)
      expect(await body(res)).toMatchObject({ error_code: 'key_scope' })
    }
    expect((await callTool(agent.key, 'create_webhook', { body: { url: mine.url } })).status).toBe(403)
    expect(await statusOf(t, id)).toBe('awaiting_approval')
  })

  it('cannot follow message.approval_required over MCP Events (list, poll, subscribe); the owner’s key can', async () => {
    const { t, agent } = await setup()
    const names = (await events('modern', agent.key, 'events/list')).result as { events: Array<{ name: string }> }
    expect(names.events.map((e) => e.name)).not.toContain('message.approval_required')
    for (const method of ['events/poll', 'events/subscribe']) {
      const answer = await events('modern', agent.key, method, { name: 'message.approval_required', delivery: { url: receiverChannel('mcp').url } })
      expect(answer.error, method).toMatchObject({ code: -32024, message: expect.stringContaining('owner') })
    }
    expect((await events('modern', t.key, 'events/poll', { name: 'message.approval_required' })).error).toBeUndefined()
  })

  it('cannot fake a first contact: its custom-channel push is refused and the next send is still held', async () => {
    const { t, agent } = await setup()
    const push = await call('/v1/channels/custom/inbound', { method: 'POST', key: agent.key, json: { customData: { body: 'hi', fromId: 'stranger' } } })
    expect(push.status).toBe(403)
    expect(await body(push)).toEqual({ success: false, error: expect.stringContaining('pushing its inbound messages'), error_code: 403 })
    expect((await callTool(agent.key, 'push_custom_channel_message', { body: { customData: { body: 'hi', fromId: 'stranger' } } })).status).toBe(403)
    const res = await sendAs(agent.key, 'stranger', 'Hello there')
    expect(await body(res)).toMatchObject({ status: 'awaiting_approval' })
    // Nor may it connect a transport whose webhooks it could forge, or point the channel elsewhere.
    const connect = await call('/v1/channels/custom', { method: 'PUT', key: agent.key, json: { webhook_url: receiverChannel('x').url } })
    expect(connect.status).toBe(403)
    // The owner's bridge still pushes.
    expect((await pushInbound(t, { body: 'hi', fromId: 'friend' })).status).toBe(200)
  })

  it('cannot list, mint or revoke keys: the owner’s key keeps working', async () => {
    const { t, agent } = await setup()
    expect((await call(`/v1/keys/${t.keyId}`, { method: 'DELETE', key: agent.key })).status).toBe(403)
    expect((await call('/v1/keys', { key: agent.key })).status).toBe(403)
    expect((await call('/v1/keys', { method: 'POST', key: agent.key, json: { scope: 'read' } })).status).toBe(403)
    expect((await call('/v1/usage', { key: t.key })).status).toBe(200)
  })
})

describe('approval links go only to destinations the owner configured', () => {
  it('skips a subscription the owner never saved, replays none to it, and reaches it once the owner saves it', async () => {
    const t = await newTenant()
    await connectCustom(t, 'bridge')
    const agent = await adminKey(t.tenantId, { approval: true })
    const confirmed = receiverChannel('confirmed')
    const legacy = receiverChannel('legacy')
    await createWebhook(t, { name: 'confirmed', url: confirmed.url, subscribed_to: ['message.approval_required'] })
    await createWebhook(t, { name: 'legacy', url: legacy.url, subscribed_to: ['message.approval_required'] })
    // A subscription from before the rule whose creator the records cannot prove to be the owner (migration 0013).
    await db
      .update(webhooks)
      .set({ ownerConfigured: false })
      .where(and(eq(webhooks.tenantId, t.tenantId), eq(webhooks.name, 'legacy')))
    const since = new Date(Date.now() - 1000).toISOString()
    await body(await sendAs(agent.key, 'stranger-1', 'first'))
    await confirmed.waitFor(1)
    const log = await body<{ deliveries: unknown[] }>(await call('/v1/webhooks/legacy/deliveries', { key: t.key }))
    expect(log.deliveries).toEqual([])
    const replay = await call('/v1/webhooks/legacy/replay', { method: 'POST', key: t.key, json: { since } })
    expect(await body(replay)).toMatchObject({ queued: 0 })
    expect(await legacy.log()).toEqual([])

    expect((await call('/v1/webhooks/legacy', { method: 'PUT', key: t.key, json: { enabled: true, name: 'legacy' } })).status).toBe(200)
    await body(await sendAs(agent.key, 'stranger-2', 'second'))
    const [got] = await legacy.waitFor(1)
    expect(got?.headers['x-webhook-event']).toBe('message.approval_required')
    expect(got?.json).toMatchObject({ message: { text: 'second' } })
  })
})

describe('a key limited to one account', () => {
  const B = '+15550003333'

  async function setup() {
    const t = await newTenant()
    await addAccount(t.tenantId, { id: B, channel: 'sms' })
    const limited = await adminKey(t.tenantId, { accounts: ['+15550004444'], label: 'other number' })
    return { t, limited }
  }

  it('gets 403 on the probes that reached another account: SMS, the page inbox, media, webhooks, keys', async () => {
    const { t, limited } = await setup()
    const mediaId = await storedImage(t.tenantId, B, 'probe')
    const probes: Array<[string, string, unknown, string]> = [
      ['DELETE', `/v1/channels/sms?phone_number=${encodeURIComponent(B)}`, undefined, 'key_account'],
      ['DELETE', '/v1/channels/sms', undefined, 'key_scope'],
      ['GET', '/v1/channels/sms', undefined, 'key_account'],
      ['DELETE', '/v1/channels/meta', undefined, 'key_scope'],
      ['PUT', '/v1/channels/meta/app', { app_id: '1', app_secret: 's', config_id: 'c' }, 'key_scope'],
      ['GET', '/v1/channels/meta/status', undefined, 'key_account'],
      ['GET', `/v1/media/${mediaId}`, undefined, 'key_account'],
      ['GET', `/v1/media/${mediaId}/link`, undefined, 'key_account'],
      ['POST', '/v1/webhooks', { url: receiverChannel('l').url }, 'key_account'],
      ['GET', '/v1/webhooks', undefined, 'key_account'],
      ['DELETE', `/v1/keys/${t.keyId}`, undefined, 'key_account'],
      ['POST', '/v1/messages', { account_id: B, to: { phone: '+447700900123' }, text: 'hi' }, 'key_account'],
    ]
    for (const [method, path, json, code] of probes) {
      const res = await call(path, { method, key: limited.key, json })
      const text = await res.text()
      expect(res.status, `${method} ${path}: ${text}`).toBe(403)
      const family = code === 'key_account' ? /may not use account|every account of the tenant|concerns every account/ : /may not do this/
      expect(text, `${method} ${path}`).toMatch(family)
    }
    // Nothing happened: the number is still connected and the owner's key still works.
    const accounts = await body<{ accounts: Array<{ id: string }> }>(await call('/v1/accounts', { key: t.key }))
    expect(accounts.accounts.map((a) => a.id)).toEqual([B])
    // Its own lists show nothing of B's.
    expect(await body(await call('/v1/accounts', { key: limited.key }))).toEqual({ accounts: [] })
    expect(await body(await call('/v1/usage', { key: limited.key }))).toMatchObject({ accounts_total: 0 })
  })
})

describe('requests the check could not place', () => {
  it('decides HEAD exactly as GET, and audits the refusal', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const reader = await adminKey(t.tenantId, { scope: 'read', accounts: ['+15550009999'], label: 'probe reader' })
    for (const path of ['/v1/keys', '/v1/webhooks/0/signing-secret', '/v1/messages?account_id=custom', '/v1/channels/custom']) {
      const get = await call(path, { key: reader.key })
      const head = await call(path, { method: 'HEAD', key: reader.key })
      expect([get.status, head.status], path).toEqual([403, 403])
    }
    const entries = await until(async () => {
      const rows = await db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.tenantId, t.tenantId), eq(auditLog.keyLabel, 'probe reader')))
      return rows.length >= 8 ? rows : undefined
    }, 'eight audit rows')
    expect(entries.filter((e) => e.route.startsWith('HEAD ')).map((e) => [e.route, e.outcome, e.code])).toEqual([
      ['HEAD /v1/keys', 'refused', 'key_account'],
      ['HEAD /v1/webhooks/{webhookId}/signing-secret', 'refused', 'key_account'],
      ['HEAD /v1/messages', 'refused', 'key_account'],
      ['HEAD /v1/channels/custom', 'refused', 'key_account'],
    ])
  })

  it('refuses a request no route answers to every key below the owner, audited, and lets the owner have the 404', async () => {
    const t = await newTenant()
    const agent = await adminKey(t.tenantId, { approval: true, label: 'probe agent' })
    for (const [method, path] of [
      ['GET', '/v1/contacts'],
      ['OPTIONS', '/v1/messages'],
      ['PATCH', '/v1/webhooks/0'],
    ] as const) {
      const refused = await call(path, { method, key: agent.key })
      expect(refused.status, `${method} ${path}`).toBe(403)
      expect(await refused.text()).toMatch(/no such operation/)
      expect((await call(path, { method, key: t.key })).status, `${method} ${path}`).toBe(404)
    }
    const rows = await db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.tenantId, t.tenantId), eq(auditLog.keyLabel, 'probe agent')))
    expect(rows.map((r) => [r.route, r.code])).toEqual([
      ['GET /v1/contacts', 'key_scope'],
      ['OPTIONS /v1/messages', 'key_scope'],
      ['PATCH /v1/webhooks/0', 'key_scope'],
    ])
  })
})
