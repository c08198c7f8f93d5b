// tools/call for the webhook tools: each runs its /v1/webhooks operation with the caller's key, against the same
// fixtures as the REST tests (a tenant per test, the local receiver). Reads and refusals must equal the REST answer
// byte for byte; a change made by a tool must be what REST then reads back.
import { describe, expect, it } from 'vitest'
import { TOOLS } from '../../../worker/mcp/tools'
import { admin, connectCustom, newTenant, pushInbound, receiverChannel, type TestTenant } from '../helpers'
import { api, settledLog, TEST_DELIVERED, type WireDelivery, type WireWebhook } from '../webhook-helpers'
import { callTool, type ToolAnswer } from './rpc'

const URL_A = 'https://hooks.example.com/a'
const URL_B = 'https://hooks.example.com/b'

/** The REST answer to the operation a tool stands for, on the same tenant. */
async function rest(t: TestTenant, method: string, path: string, json?: unknown) {
  const res = await api(t, method, path, json)
  return { status: res.status, json: res.body }
}

/** A tool answer and a REST answer are the same when status and JSON body are. */
function sameAsRest(tool: ToolAnswer, res: { status: number; json: unknown }) {
  expect({ status: tool.status, json: tool.json }).toEqual(res)
  expect(tool.isError).toBe(res.status >= 400)
}

async function createVia(t: TestTenant, body: Record<string, unknown>) {
  const created = await callTool(t.key, 'create_webhook', { body })
  expect(created.status, JSON.stringify(created.json)).toBe(201)
  return created.json as { success: true; webhook: WireWebhook; signing_secret: string | null }
}

describe('list_webhook_events', () => {
  it('answers the body of GET /v1/webhooks/events', async () => {
    const t = await newTenant()
    const tool = await callTool(t.key, 'list_webhook_events')
    sameAsRest(tool, await rest(t, 'GET', '/webhooks/events'))
    expect(tool.json).toMatchObject({ success: true, events: expect.arrayContaining(['message.received', 'account.limit_reached']) })
  })
})

describe('create_webhook and list_webhooks', () => {
  it('creates a subscription that GET /v1/webhooks/{name} and list_webhooks then show as REST does', async () => {
    const t = await newTenant()
    const created = await createVia(t, { url: URL_A, subscribed_to: ['message.received', 'message.failed'], name: 'crm', retries_enabled: true })
    expect(created).toEqual({
      success: true,
      signing_secret: null,
      webhook: {
        id: '0',
        name: 'crm',
        url: URL_A,
        subscribed_to: ['message.received', 'message.failed'],
        created_at: expect.any(String),
        enabled: true,
        retries_enabled: true,
        signing_enabled: false,
        signing_secret_created_at: null,
      },
    })
    expect((await rest(t, 'GET', '/webhooks/crm')).json).toEqual({ success: true, webhook: created.webhook })
    const listed = await callTool(t.key, 'list_webhooks')
    sameAsRest(listed, await rest(t, 'GET', '/webhooks'))
    expect(listed.json).toEqual({ success: true, webhooks: [created.webhook] })
  })

  it('returns the signing secret once, and list_webhooks never shows it', async () => {
    const t = await newTenant()
    const created = await createVia(t, { url: URL_A, subscribed_to: ['message.sent'], name: 'signed', generate_signing_secret: true })
    expect(created.signing_secret).toMatch(/^whsec_/)
    expect(created.webhook.signing_enabled).toBe(true)
    expect((await callTool(t.key, 'list_webhooks')).text).not.toContain(created.signing_secret!)
  })

  it('answers HTTP 400 with the REST body for an unknown event name, no event, a missing body and a URL that is not public https', async () => {
    const t = await newTenant()
    for (const body of [
      { url: URL_A, subscribed_to: ['message.received', 'message.exploded'] },
      { url: URL_A, subscribed_to: [] },
      {},
      { url: 'https://10.0.0.1/hook', subscribed_to: ['message.received'] },
      { url: 'http://hooks.example.com/plain', subscribed_to: ['message.received'] },
    ]) {
      const tool = await callTool(t.key, 'create_webhook', { body })
      expect(tool.status, JSON.stringify(body)).toBe(400)
      sameAsRest(tool, await rest(t, 'POST', '/webhooks', body))
    }
    const unknown = await callTool(t.key, 'create_webhook', { body: { url: URL_A, subscribed_to: ['message.exploded'] } })
    expect(unknown.json).toEqual({
      success: false,
      error: expect.stringContaining("unknown event 'message.exploded'; valid events are message.received"),
      error_code: 400,
    })
    expect((await callTool(t.key, 'list_webhooks')).json).toEqual({ success: true, webhooks: [] })
  })

  it('answers HTTP 409 with the REST body for a taken name', async () => {
    const t = await newTenant()
    await createVia(t, { url: URL_A, subscribed_to: ['message.received'], name: 'crm' })
    const body = { url: URL_B, subscribed_to: ['message.received'], name: 'crm' }
    const tool = await callTool(t.key, 'create_webhook', { body })
    expect(tool.status).toBe(409)
    sameAsRest(tool, await rest(t, 'POST', '/webhooks', body))
  })

  it('answers HTTP 403 with the REST body when webhooks are not enabled for the account', async () => {
    const t = await newTenant()
    await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { webhooks_enabled: false } })
    for (const [name, args, method, path] of [
      ['list_webhooks', {}, 'GET', '/webhooks'],
      ['create_webhook', { body: { url: URL_A, subscribed_to: ['message.received'] } }, 'POST', '/webhooks'],
    ] as const) {
      const tool = await callTool(t.key, name, args)
      expect(tool.status, name).toBe(403)
      sameAsRest(tool, await rest(t, method, path, 'body' in args ? args.body : undefined))
    }
  })
})

describe('update_webhook', () => {
  it('changes only the given fields, by name or by position, as REST then reads them', async () => {
    const t = await newTenant()
    const { webhook } = await createVia(t, { url: URL_A, subscribed_to: ['message.received'], name: 'crm' })
    const updated = await callTool(t.key, 'update_webhook', { webhookId: 'crm', body: { subscribed_to: ['message.sent'], enabled: false } })
    expect(updated.status).toBe(200)
    expect(updated.json).toEqual({ success: true, webhook: { ...webhook, subscribed_to: ['message.sent'], enabled: false } })
    expect((await rest(t, 'GET', '/webhooks/crm')).json).toEqual(updated.json)
    const renamed = await callTool(t.key, 'update_webhook', { webhookId: '0', body: { name: 'crm-sync', url: URL_B } })
    expect(renamed.json).toMatchObject({ webhook: { id: '0', name: 'crm-sync', url: URL_B } })
    expect((await rest(t, 'GET', '/webhooks/crm-sync')).json).toEqual(renamed.json)
  })

  it('answers the REST 400 without url, subscribed_to or name, and for an unknown event', async () => {
    const t = await newTenant()
    await createVia(t, { url: URL_A, subscribed_to: ['message.received'], name: 'crm' })
    for (const body of [{ enabled: false }, { subscribed_to: ['message.nope'] }]) {
      const tool = await callTool(t.key, 'update_webhook', { webhookId: 'crm', body })
      expect(tool.status, JSON.stringify(body)).toBe(400)
      sameAsRest(tool, await rest(t, 'PUT', '/webhooks/crm', body))
    }
  })
})

describe('delete_webhook', () => {
  it('deletes the subscription and says which one it was; a second call answers the REST 404', async () => {
    const t = await newTenant()
    await createVia(t, { url: URL_A, subscribed_to: ['message.received'], name: 'gone' })
    const deleted = await callTool(t.key, 'delete_webhook', { webhookId: 'gone' })
    expect(deleted.status).toBe(200)
    expect(deleted.json).toEqual({ success: true, webhook_id: '0', name: 'gone', url: URL_A })
    expect((await rest(t, 'GET', '/webhooks/gone')).status).toBe(404)
    const again = await callTool(t.key, 'delete_webhook', { webhookId: 'gone' })
    expect(again.status).toBe(404)
    sameAsRest(again, await rest(t, 'DELETE', '/webhooks/gone'))
  })
})

describe('every per-subscription tool', () => {
  it('answers HTTP 404 with isError and the REST body for an unknown webhookId', async () => {
    const t = await newTenant()
    const bodies: Record<string, unknown> = { update_webhook: { name: 'x' }, replay_webhook: { since: new Date().toISOString() } }
    const byId = TOOLS.filter((tool) => tool.path.includes('{webhookId}'))
    expect(byId.map((tool) => tool.name).sort()).toEqual(
      [
        'update_webhook',
        'delete_webhook',
        'test_webhook',
        'get_webhook_health',
        'reenable_webhook',
        'get_webhook_signing_secret',
        'rotate_webhook_signing_secret',
        'turn_off_webhook_signing',
        'list_webhook_deliveries',
        'replay_webhook',
      ].sort()
    )
    for (const tool of byId) {
      const body = bodies[tool.name]
      const got = await callTool(t.key, tool.name, { webhookId: 'nope', ...(body ? { body } : {}) })
      expect(got.status, tool.name).toBe(404)
      expect(got.json).toEqual({ success: false, error: "No webhook subscription with id or name 'nope'", error_code: 404 })
      sameAsRest(got, await rest(t, tool.method, tool.path.replace('{webhookId}', 'nope'), body ?? (tool.method === 'POST' ? {} : undefined)))
    }
  })

  it('encodes webhookId, so a crafted id names no subscription instead of reaching another route', async () => {
    const t = await newTenant()
    await createVia(t, { url: URL_A, subscribed_to: ['message.received'], name: 'crm' })
    const got = await callTool(t.key, 'get_webhook_health', { webhookId: '../events' })
    expect(got.status).toBe(404)
    expect(got.json).toMatchObject({ error: "No webhook subscription with id or name '../events'" })
  })
})

describe('test_webhook', () => {
  it('sends the default event to the receiver, signed, and answers delivered true', async () => {
    const t = await newTenant()
    const ch = receiverChannel('mcp-test')
    const { signing_secret } = await createVia(t, { url: ch.url, subscribed_to: ['message.received'], name: 'probe', generate_signing_secret: true })
    await ch.behave({ secret: signing_secret! })
    const tool = await callTool(t.key, 'test_webhook', { webhookId: 'probe' })
    expect(tool.status).toBe(200)
    expect(tool.isError).toBe(false)
    expect(tool.json).toEqual(TEST_DELIVERED)
    const [r] = await ch.waitFor(1)
    expect(r!.headers).toMatchObject({ 'x-webhook-test': 'true', 'x-webhook-event': 'message.delivered', 'x-webhook-delivery': tool.json.delivery_id })
    expect(r!.verified).toBe(true)
    // The REST call sends one too; everything but the id and the timing is the same answer.
    const res = await rest(t, 'POST', '/webhooks/probe/test')
    expect(res.json).toEqual({ ...tool.json, delivery_id: expect.stringMatching(/^dlv_test_/), duration_ms: expect.any(Number) })
  })

  it('sends the event named in body.event, and answers HTTP 200 delivered false with the failure when the receiver fails', async () => {
    const t = await newTenant()
    const ch = receiverChannel('mcp-test-fail')
    await ch.behave({ status: 500 })
    await createVia(t, { url: ch.url, subscribed_to: ['message.received'], name: 'down' })
    const tool = await callTool(t.key, 'test_webhook', { webhookId: 'down', body: { event: 'account.connected' } })
    expect(tool.status).toBe(200)
    expect(tool.isError).toBe(false)
    expect(tool.json).toMatchObject({
      event: 'account.connected',
      delivered: false,
      status_code: 500,
      failure_type: 'temporary',
      error_message: 'answered HTTP 500',
    })
    const [r] = await ch.waitFor(1)
    expect(r!.headers['x-webhook-event']).toBe('account.connected')
    // A test never touches health.
    expect((await callTool(t.key, 'get_webhook_health', { webhookId: 'down' })).json).toMatchObject({ health: null })
  })

  it('answers the REST 400 for an unknown event, without sending anything', async () => {
    const t = await newTenant()
    const ch = receiverChannel('mcp-test-bad')
    await createVia(t, { url: ch.url, subscribed_to: ['message.received'], name: 'probe' })
    const tool = await callTool(t.key, 'test_webhook', { webhookId: 'probe', body: { event: 'message.nope' } })
    expect(tool.status).toBe(400)
    sameAsRest(tool, await rest(t, 'POST', '/webhooks/probe/test', { event: 'message.nope' }))
    expect(tool.json).toMatchObject({ error: expect.stringContaining("unknown event 'message.nope'") })
    expect(await ch.log()).toEqual([])
  })
})

describe('get_webhook_signing_secret, rotate_webhook_signing_secret, turn_off_webhook_signing', () => {
  it('reads signing off, rotates a secret in, reads that secret back, and turns signing off as REST does', async () => {
    const t = await newTenant()
    await createVia(t, { url: URL_A, subscribed_to: ['message.received'], name: 's' })
    const off = await callTool(t.key, 'get_webhook_signing_secret', { webhookId: 's' })
    sameAsRest(off, await rest(t, 'GET', '/webhooks/s/signing-secret'))
    expect(off.json).toMatchObject({ signing_enabled: false, signing_secret: null })

    const minted = await callTool(t.key, 'rotate_webhook_signing_secret', { webhookId: 's' })
    expect(minted.status).toBe(200)
    expect(minted.json).toEqual({
      success: true,
      webhook_id: '0',
      signing_enabled: true,
      signing_secret: expect.stringMatching(/^whsec_/),
      signing_secret_created_at: expect.any(String),
    })
    const read = await callTool(t.key, 'get_webhook_signing_secret', { webhookId: 's' })
    expect(read.json).toEqual(minted.json)
    sameAsRest(read, await rest(t, 'GET', '/webhooks/s/signing-secret'))

    const rotated = await callTool(t.key, 'rotate_webhook_signing_secret', { webhookId: 's' })
    expect(rotated.json.signing_secret).not.toBe(minted.json.signing_secret)
    expect((await rest(t, 'GET', '/webhooks/s/signing-secret')).json).toEqual(rotated.json)

    const turnedOff = await callTool(t.key, 'turn_off_webhook_signing', { webhookId: 's' })
    expect(turnedOff.json).toEqual({ success: true, webhook_id: '0', signing_enabled: false, signing_secret: null, signing_secret_created_at: null })
    // Idempotent: a second call, by tool or by REST, answers the same.
    sameAsRest(await callTool(t.key, 'turn_off_webhook_signing', { webhookId: 's' }), await rest(t, 'DELETE', '/webhooks/s/signing-secret'))
    expect((await rest(t, 'GET', '/webhooks/s')).json).toMatchObject({ webhook: { signing_enabled: false } })
  })
})

describe('recovering a paused URL through the tools', () => {
  it('health shows the pause, deliveries the missed events, replay is refused until reenable, then re-sends them with their original ids', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const ch = receiverChannel('mcp-recover')
    // 410 Gone pauses the URL at once; afterwards the receiver answers 200.
    await ch.behave({ sequence: [{ status: 410 }] })
    await createVia(t, { url: ch.url, subscribed_to: ['message.received'], name: 'hook' })
    const since = new Date(Date.now() - 1000).toISOString()
    expect((await pushInbound(t, { body: 'first', fromId: 'r-1' })).status).toBe(200)
    await settledLog(t, 'hook', 1)
    expect((await pushInbound(t, { body: 'second', fromId: 'r-2' })).status).toBe(200)
    const missed = await settledLog(t, 'hook', 2)
    expect(missed.map((d) => d.status)).toEqual(['paused', 'failed'])

    const health = await callTool(t.key, 'get_webhook_health', { webhookId: 'hook' })
    sameAsRest(health, await rest(t, 'GET', '/webhooks/hook/health'))
    expect(health.json).toMatchObject({
      webhook_id: '0',
      url: ch.url,
      health: { is_disabled: true, consecutive_failures: 1, last_failure: { status_code: 410 } },
    })

    const log = await callTool(t.key, 'list_webhook_deliveries', { webhookId: 'hook' })
    sameAsRest(log, await rest(t, 'GET', '/webhooks/hook/deliveries'))
    expect((log.json.deliveries as WireDelivery[]).map((d) => d.delivery_id)).toEqual(missed.map((d) => d.delivery_id))

    const blocked = await callTool(t.key, 'replay_webhook', { webhookId: 'hook', body: { since } })
    expect(blocked.status).toBe(409)
    sameAsRest(blocked, await rest(t, 'POST', '/webhooks/hook/replay', { since }))

    const reenabled = await callTool(t.key, 'reenable_webhook', { webhookId: 'hook' })
    expect(reenabled.status).toBe(200)
    expect(reenabled.json).toMatchObject({ health: { is_disabled: false, consecutive_failures: 0 } })
    expect((await rest(t, 'GET', '/webhooks/hook/health')).json).toEqual(reenabled.json)
    expect(await ch.log()).toHaveLength(1)

    const replayed = await callTool(t.key, 'replay_webhook', { webhookId: 'hook', body: { since } })
    expect(replayed.status).toBe(200)
    expect(replayed.json).toEqual({ success: true, webhook_id: '0', queued: 2, already_delivered: 0, in_flight: 0, next_since: null })
    const received = (await ch.waitFor(3)).slice(1).map((r) => r.headers['x-webhook-delivery'])
    expect(received.sort()).toEqual(missed.map((d) => d.delivery_id).sort())
    await settledLog(t, 'hook', 2, (d) => d.status === 'delivered')

    // Nothing is left undelivered: a second replay, by tool or by REST, queues nothing and answers the same.
    sameAsRest(await callTool(t.key, 'replay_webhook', { webhookId: 'hook', body: { since } }), await rest(t, 'POST', '/webhooks/hook/replay', { since }))
  })
})

describe('list_webhook_deliveries', () => {
  it('passes limit, status and cursor through as query parameters and answers the REST page', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const ch = receiverChannel('mcp-log')
    await ch.behave({ sequence: [{ status: 200 }, { status: 500 }, { status: 200 }] })
    await createVia(t, { url: ch.url, subscribed_to: ['message.received'], name: 'hook' })
    for (let i = 0; i < 3; i++) {
      expect((await pushInbound(t, { body: `event ${i}`, fromId: `l-${i}` })).status).toBe(200)
      await settledLog(t, 'hook', i + 1)
    }
    const page1 = await callTool(t.key, 'list_webhook_deliveries', { webhookId: 'hook', limit: 2 })
    sameAsRest(page1, await rest(t, 'GET', '/webhooks/hook/deliveries?limit=2'))
    expect(page1.json.deliveries).toHaveLength(2)
    const cursor = page1.json.next_cursor as string
    expect(cursor).toEqual(expect.any(String))
    const page2 = await callTool(t.key, 'list_webhook_deliveries', { webhookId: 'hook', limit: 2, cursor })
    sameAsRest(page2, await rest(t, 'GET', `/webhooks/hook/deliveries?limit=2&cursor=${encodeURIComponent(cursor)}`))
    expect(page2.json).toMatchObject({ next_cursor: null, deliveries: [expect.anything()] })
    const failed = await callTool(t.key, 'list_webhook_deliveries', { webhookId: 'hook', status: 'failed' })
    sameAsRest(failed, await rest(t, 'GET', '/webhooks/hook/deliveries?status=failed'))
    expect(failed.json.deliveries).toEqual([expect.objectContaining({ status: 'failed', last_status_code: 500 })])
  })

  it('answers the REST 400 for a limit over 100, an unknown status and a cursor it did not issue', async () => {
    const t = await newTenant()
    await createVia(t, { url: URL_A, subscribed_to: ['message.received'], name: 'hook' })
    for (const [args, query] of [
      [{ limit: 101 }, 'limit=101'],
      [{ status: 'lost' }, 'status=lost'],
      [{ cursor: 'abc' }, 'cursor=abc'],
    ] as const) {
      const tool = await callTool(t.key, 'list_webhook_deliveries', { webhookId: 'hook', ...args })
      expect(tool.status, query).toBe(400)
      sameAsRest(tool, await rest(t, 'GET', `/webhooks/hook/deliveries?${query}`))
    }
  })
})

describe('replay_webhook', () => {
  it('answers the REST 400 for a window older than 7 days, a bad date and a missing since', async () => {
    const t = await newTenant()
    await createVia(t, { url: URL_A, subscribed_to: ['message.received'], name: 'hook' })
    for (const body of [{ since: new Date(Date.now() - 8 * 86_400_000).toISOString() }, { since: 'yesterday' }, {}]) {
      const tool = await callTool(t.key, 'replay_webhook', { webhookId: 'hook', body })
      expect(tool.status, JSON.stringify(body)).toBe(400)
      sameAsRest(tool, await rest(t, 'POST', '/webhooks/hook/replay', body))
    }
  })

  it('answers the REST 409 while the subscription is switched off', async () => {
    const t = await newTenant()
    await createVia(t, { url: URL_A, subscribed_to: ['message.received'], name: 'hook', enabled: false })
    const body = { since: new Date(Date.now() - 60_000).toISOString() }
    const tool = await callTool(t.key, 'replay_webhook', { webhookId: 'hook', body })
    expect(tool.status).toBe(409)
    sameAsRest(tool, await rest(t, 'POST', '/webhooks/hook/replay', body))
  })
})
