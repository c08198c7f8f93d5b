/**
 * The audit log: every changing call leaves exactly one entry (REST and MCP), refusals for the key are logged,
 * successful reads are not, texts are never copied; newest first with cursor pages and filters; tenants see only
 * their own; retention by age.
 */
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { auditLog } from '../../../schema/d1'
import { AUDIT_RETENTION_MS } from '../../../worker/safety/audit-note'
import { sweepSafety } from '../../../worker/messaging/safety-sweep'
import { body, call, connectCustom, newTenant, pushInbound, receiverChannel, type TestTenant } from '../helpers'
import { callTool } from '../mcp/rpc'
import { db } from '../state'
import { adminKey } from './helpers'

type Entry = {
  id: string
  key_id: string | null
  key_label: string | null
  action: string
  route: string
  account_id: string | null
  contact_id: string | null
  message_id: string | null
  outcome: string
  code: string | null
  status: number
  created_at: string
}
type Page = { entries: Entry[]; next_cursor: string | null }

async function audit(t: TestTenant, query = '', key = t.key): Promise<Page> {
  const res = await call(`/v1/audit${query ? `?${query}` : ''}`, { key })
  expect(res.status, await res.clone().text()).toBe(200)
  return body<Page>(res)
}

async function all(t: TestTenant): Promise<Entry[]> {
  const out: Entry[] = []
  let before: string | null = null
  do {
    const page = await audit(t, `limit=100${before ? `&before=${before}` : ''}`)
    out.push(...page.entries)
    before = page.next_cursor
  } while (before)
  return out
}

describe('completeness', () => {
  it('leaves exactly one entry per changing call and none for successful reads or accepted inbound pushes', async () => {
    const t = await newTenant()
    const hooks = receiverChannel('audit-hooks')
    const calls: [string, string, unknown?][] = [
      ['PUT', '/v1/channels/custom', { webhook_url: receiverChannel('audit-bridge').url }],
      ['POST', '/v1/channels/custom/inbound', { customData: { body: 'secret words', fromId: 'friend' } }],
      ['POST', '/v1/messages', { to: { external_id: 'friend' }, text: 'private reply text' }],
      ['POST', '/v1/webhooks', { url: hooks.url, subscribed_to: ['message.received'], name: 'hook' }],
      ['PUT', '/v1/webhooks/hook', { subscribed_to: ['message.sent'] }],
      ['POST', '/v1/keys', { scope: 'read', label: 'reader' }],
      ['DELETE', '/v1/webhooks/hook'],
      ['POST', '/v1/messages', { to: { external_id: 'friend' } }],
    ]
    for (const [method, path, json] of calls) {
      await call(path, { method, key: t.key, json })
      // Reads between the changes add nothing.
      await call('/v1/messages', { key: t.key })
      await call('/v1/accounts', { key: t.key })
    }
    const entries = await all(t)
    // The accepted push is stored as a message, which is its record: no audit row of its own.
    expect(entries).toHaveLength(calls.length - 1)
    expect(entries.map((e) => e.route).reverse()).toEqual([
      'PUT /v1/channels/custom',
      'POST /v1/messages',
      'POST /v1/webhooks',
      'PUT /v1/webhooks/{webhookId}',
      'POST /v1/keys',
      'DELETE /v1/webhooks/{webhookId}',
      'POST /v1/messages',
    ])
    expect(entries.map((e) => e.outcome).reverse()).toEqual(['accepted', 'accepted', 'accepted', 'accepted', 'accepted', 'accepted', 'refused'])
    expect(entries[0]).toMatchObject({ outcome: 'refused', code: 'invalid_text', status: 400, key_id: t.keyId })
    const send = entries[5]!
    expect(send).toMatchObject({
      action: 'POST /v1/messages',
      account_id: 'custom',
      contact_id: expect.any(String),
      message_id: expect.stringMatching(/^msg/),
      status: 202,
    })
    // Message texts are never copied into the log.
    const raw = JSON.stringify(await db.select().from(auditLog))
    expect(raw).not.toContain('private reply text')
    expect(raw).not.toContain('secret words')
  })

  it('logs a refused inbound push, though an accepted one leaves no entry', async () => {
    const t = await newTenant()
    await connectCustom(t)
    expect((await pushInbound(t, { body: 'hello', fromId: 'friend' })).status).toBe(200)
    const bad = await call('/v1/channels/custom/inbound', { method: 'POST', key: t.key, json: { customData: { fromId: 'friend' } } })
    expect(bad.status).toBe(400)
    const reader = await adminKey(t.tenantId, { scope: 'read', label: 'bridge' })
    expect((await pushInbound({ ...t, key: reader.key }, { body: 'hello', fromId: 'friend' })).status).toBe(403)
    const entries = await all(t)
    expect(entries.map((e) => [e.route, e.outcome, e.status])).toEqual([
      ['POST /v1/channels/custom/inbound', 'refused', 403],
      ['POST /v1/channels/custom/inbound', 'refused', 400],
      ['PUT /v1/channels/custom', 'accepted', 200],
    ])
  })

  it('logs a refusal for the key, even of a read, with its code and the key’s label', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const reader = await adminKey(t.tenantId, { scope: 'read', label: 'dashboard', accounts: ['+15550001'] })
    await call('/v1/messages', { method: 'POST', key: reader.key, json: { to: { external_id: 'x' }, text: 'hi' } })
    await call('/v1/messages?account_id=custom', { key: reader.key })
    await call('/v1/usage', { key: reader.key })
    const entries = (await audit(t, `key_id=${reader.id}`)).entries
    expect(entries.map((e) => [e.route, e.outcome, e.code, e.key_label])).toEqual([
      ['GET /v1/messages', 'refused', 'key_account', 'dashboard'],
      ['POST /v1/messages', 'refused', 'key_scope', 'dashboard'],
    ])
  })

  it('names the MCP tool of a call made through /mcp, once', async () => {
    const t = await newTenant()
    await connectCustom(t)
    await pushInbound(t, { body: 'hi', fromId: 'friend' })
    const agent = await adminKey(t.tenantId, { scope: 'reply', label: 'mcp agent' })
    const sent = await callTool(agent.key, 'send_message', { body: { to: { external_id: 'friend' }, text: 'hello' } })
    expect(sent.status).toBe(202)
    const refused = await callTool(agent.key, 'create_webhook', { body: { url: 'https://hooks.example.com/a', subscribed_to: ['message.received'] } })
    expect(refused.status).toBe(403)
    const entries = (await audit(t, `key_id=${agent.id}`)).entries
    expect(entries.map((e) => [e.action, e.route, e.outcome, e.code])).toEqual([
      ['create_webhook', 'POST /v1/webhooks', 'refused', 'key_scope'],
      ['send_message', 'POST /v1/messages', 'accepted', null],
    ])
  })

  it('records decisions as approved and rejected', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const agent = await adminKey(t.tenantId, { approval: true })
    const held = async (to: string) =>
      (await body<{ message_id: string }>(await call('/v1/messages', { method: 'POST', key: agent.key, json: { to: { external_id: to }, text: `hi ${to}` } })))
        .message_id
    const [a, b] = [await held('p1'), await held('p2')]
    await call(`/v1/messages/${a}/approve`, { method: 'POST', key: t.key })
    await call(`/v1/messages/${b}/reject`, { method: 'POST', key: t.key })
    const entries = (await audit(t)).entries
    expect(entries.map((e) => [e.route, e.outcome, e.message_id])).toEqual([
      ['POST /v1/messages/{id}/reject', 'rejected', b],
      ['POST /v1/messages/{id}/approve', 'approved', a],
      ['POST /v1/messages', 'accepted', b],
      ['POST /v1/messages', 'accepted', a],
      ['PUT /v1/channels/custom', 'accepted', null],
    ])
    expect(entries[2]?.code).toBe('awaiting_approval')
  })
})

describe('GET /v1/audit', () => {
  it('pages newest first and filters by key, account and outcome', async () => {
    const t = await newTenant()
    await connectCustom(t)
    for (let i = 0; i < 5; i++) await call('/v1/messages', { method: 'POST', key: t.key, json: { to: { external_id: `p${i}` } } })
    const first = await audit(t, 'limit=2')
    expect(first.entries).toHaveLength(2)
    const second = await audit(t, `limit=2&before=${first.next_cursor}`)
    const third = await audit(t, `limit=2&before=${second.next_cursor}`)
    expect(third.next_cursor).toBeNull()
    const ids = [...first.entries, ...second.entries, ...third.entries].map((e) => Number(e.id))
    expect(ids).toEqual([...ids].sort((x, y) => y - x))
    expect(new Set(ids).size).toBe(6)
    expect((await audit(t, 'outcome=refused')).entries).toHaveLength(5)
    expect((await audit(t, 'outcome=accepted')).entries).toHaveLength(1)
    // The refused sends never got as far as an account; the connect names its account.
    expect((await audit(t, 'account_id=custom')).entries.map((e) => e.route)).toEqual(['PUT /v1/channels/custom'])
    expect((await audit(t, 'key_id=key_nope')).entries).toHaveLength(0)
  })

  it('answers 400 for a bad cursor or outcome, 401 without a key, and is readable by a read key', async () => {
    const t = await newTenant()
    expect((await call('/v1/audit?before=zzz', { key: t.key })).status).toBe(400)
    expect(await body(await call('/v1/audit?outcome=maybe', { key: t.key }))).toMatchObject({ error_code: 'invalid_outcome' })
    expect((await call('/v1/audit')).status).toBe(401)
    const reader = await adminKey(t.tenantId, { scope: 'read' })
    expect((await call('/v1/audit', { key: reader.key })).status).toBe(200)
  })

  it('never shows another tenant’s entries', async () => {
    const [a, b] = [await newTenant(), await newTenant()]
    await connectCustom(a)
    expect((await audit(a)).entries).toHaveLength(1)
    expect((await audit(b)).entries).toHaveLength(0)
    expect((await audit(b, `key_id=${a.keyId}`)).entries).toHaveLength(0)
  })
})

describe('retention', () => {
  it('deletes entries older than 90 days and keeps younger ones', async () => {
    const t = await newTenant()
    const now = Date.now()
    const row = { tenantId: t.tenantId, keyId: t.keyId, keyLabel: null, action: 'x', route: 'x', outcome: 'accepted' as const, status: 200 }
    await db.insert(auditLog).values([
      { ...row, action: 'old', createdAt: now - AUDIT_RETENTION_MS - 1 },
      { ...row, action: 'young', createdAt: now - AUDIT_RETENTION_MS + 60_000 },
    ])
    await sweepSafety(env, db, now)
    expect((await audit(t)).entries.map((e) => e.action)).toEqual(['young'])
  })
})
