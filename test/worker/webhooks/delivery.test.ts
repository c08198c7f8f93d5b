/**
 * Webhook delivery end to end inside workerd: real producers (custom channel, sends, the guards) emit events, the
 * AccountDO fans them out to a real local receiver. Exact payloads per event, the headers, and the signature
 * checked by two independent HMAC implementations (the Node receiver and node:crypto here) over the raw body.
 */
import { createHmac } from 'node:crypto'
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { admin, call, connectCustom, newTenant, pushInbound, receiverChannel, send, type TestTenant } from '../helpers'
import { api, createWebhook, customAccountEvent, deliveries, health, settledLog, TEST_DELIVERED, until } from '../webhook-helpers'
import type { Received } from '../../fixtures/receiver-types'
import { database } from '../../../worker/db/client'
import { insertEvent } from '../../../worker/db/events'
import { accountEventPayload, messageEventPayload } from '../../../worker/events/payloads'
import { commitEvents } from '../../../worker/webhooks/emit'

const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)

async function subscribe(t: TestTenant, events: string[], opts: Record<string, unknown> = {}) {
  const ch = receiverChannel('wh')
  const created = await createWebhook(t, { url: ch.url, subscribed_to: events, ...opts })
  if (created.signing_secret) await ch.behave({ secret: created.signing_secret })
  return { ch, webhook: created.webhook, secret: created.signing_secret }
}

/**
 * The delivered body without its identity fields, after checking them: `delivery_id` is the header's and
 * `event_id` names an event (test deliveries: a test event).
 */
function payloadOf(r: Received): unknown {
  const { event_id, delivery_id, ...payload } = r.json as Record<string, unknown>
  expect(delivery_id).toBe(r.headers['x-webhook-delivery'])
  expect(event_id).toMatch(r.headers['x-webhook-test'] ? /^evt_test_/ : /^evt_[0-9A-Za-z]{22}$/)
  return payload
}

function independentSignature(secret: string, r: Received): string {
  return `v1=${createHmac('sha256', secret).update(`${r.headers['x-webhook-timestamp']}.${r.body}`).digest('hex')}`
}

describe('message.received', () => {
  it('POSTs the exact payload with every header, signed over the raw body', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const { ch, webhook, secret } = await subscribe(t, ['message.received'], { name: 'in', generate_signing_secret: true })
    const before = Math.floor(Date.now() / 1000)
    const pushed = await pushInbound(t, { body: 'Hello there ✓', fromId: 'user-1', firstName: 'Ada', lastName: 'L' })
    const [got] = await ch.waitFor(1)
    expect(got).toBeDefined()
    const r = got!
    expect(r.method).toBe('POST')
    expect(payloadOf(r)).toEqual({
      event: 'message.received',
      created_at: ISO,
      account_id: 'custom',
      channel: 'custom',
      message: { id: pushed.body.message_id, direction: 'inbound', text: 'Hello there ✓', media: null, status: 'received', error: null },
      contact: { id: pushed.body.contact_id, phone: null, name: 'Ada L' },
    })
    expect(r.headers['content-type']).toBe('application/json')
    expect(r.headers['user-agent']).toBe('MessagingGateway-Webhooks/1.0')
    expect(r.headers['x-webhook-event']).toBe('message.received')
    expect(r.headers['x-webhook-delivery']).toMatch(/^dlv_[0-9A-Za-z]{44}$/)
    expect(r.headers['x-webhook-attempt']).toBe('1')
    expect(Number(r.headers['x-webhook-timestamp'])).toBeGreaterThanOrEqual(before)
    expect(r.headers['x-webhook-signature']).toMatch(/^v1=[0-9a-f]{64}$/)
    expect(r.verified).toBe(true)
    expect(r.headers['x-webhook-signature']).toBe(independentSignature(secret!, r))
    expect(r.headers['x-webhook-test']).toBeUndefined()

    const [row] = await settledLog(t, webhook.name, 1)
    expect(row).toMatchObject({
      delivery_id: r.headers['x-webhook-delivery'],
      event: 'message.received',
      status: 'delivered',
      attempts: 1,
      last_status_code: 200,
      next_attempt_at: null,
    })
    expect(await health(t, webhook.name)).toMatchObject({
      consecutive_failures: 0,
      total_failures: 0,
      total_successes: 1,
      is_disabled: false,
      last_failure: null,
    })
  })

  it('sends no timestamp or signature headers when signing is off', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const { ch } = await subscribe(t, ['message.received'])
    await pushInbound(t, { body: 'plain', fromId: 'user-2' })
    const [r] = await ch.waitFor(1)
    expect(r!.headers['x-webhook-signature']).toBeUndefined()
    expect(r!.headers['x-webhook-timestamp']).toBeUndefined()
  })

  it('gives each subscription its own delivery id for the same event, and skips unsubscribed and switched-off ones', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const a = await subscribe(t, ['message.received'], { name: 'a' })
    const b = await subscribe(t, ['message.received', 'message.sent'], { name: 'b' })
    const other = await subscribe(t, ['message.sent'], { name: 'other' })
    const off = await subscribe(t, ['message.received'], { name: 'off', enabled: false })
    await pushInbound(t, { body: 'fan out', fromId: 'user-3' })
    const [ra] = await a.ch.waitFor(1)
    const [rb] = await b.ch.waitFor(1)
    expect(ra!.headers['x-webhook-delivery']).not.toBe(rb!.headers['x-webhook-delivery'])
    // The same event, each delivery naming itself inside its body.
    expect(payloadOf(ra!)).toEqual(payloadOf(rb!))
    expect(ra!.json).toMatchObject({ event_id: (rb!.json as { event_id: string }).event_id })
    await settledLog(t, 'a', 1)
    await settledLog(t, 'b', 1)
    expect(await other.ch.log()).toEqual([])
    expect(await off.ch.log()).toEqual([])
    expect(await deliveries(t, 'off')).toEqual([])
  })

  it('delivers nothing while webhooks are switched off for the account, and marks the events dispatched', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const { ch, webhook } = await subscribe(t, ['message.received'])
    await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { webhooks_enabled: false } })
    await pushInbound(t, { body: 'quiet', fromId: 'user-4' })
    await until(async () => {
      const row = await env.DB.prepare('SELECT count(*) AS n FROM events WHERE tenant_id = ? AND dispatched_at IS NULL').bind(t.tenantId).first<{ n: number }>()
      return row?.n === 0
    }, 'events dispatched')
    expect(await ch.log()).toEqual([])
    await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { webhooks_enabled: true } })
    expect(await deliveries(t, webhook.name)).toEqual([])
  })
})

describe('events nobody subscribes to', () => {
  const undispatched = async (tenantId: string) =>
    (await env.DB.prepare('SELECT count(*) AS n FROM events WHERE tenant_id = ? AND dispatched_at IS NULL').bind(tenantId).first<{ n: number }>())?.n

  it('are written already dispatched, with no subscription or one to other events only', async () => {
    const t = await newTenant()
    await connectCustom(t)
    await pushInbound(t, { body: 'nobody listens', fromId: 'user-5' })
    // Decided inside the insert: there is nothing to wait for.
    expect(await undispatched(t.tenantId)).toBe(0)
    const { ch } = await subscribe(t, ['message.sent'])
    await pushInbound(t, { body: 'still nobody', fromId: 'user-5' })
    expect(await undispatched(t.tenantId)).toBe(0)
    expect(await ch.log()).toEqual([])
  })

  it('are decided at insert for every event type: dispatched when unsubscribed, pending when subscribed', async () => {
    const t = await newTenant()
    await connectCustom(t)
    await subscribe(t, ['account.restricted'])
    const db = database(env.DB)
    const now = Date.now()
    const restricted = accountEventPayload(
      'account.restricted',
      { id: 'custom', channel: 'custom', identifier: 'x', status: 'restricted' },
      'blocked_by_alpha',
      now
    )
    const connected = accountEventPayload('account.connected', { id: 'custom', channel: 'custom', identifier: 'x', status: 'connected' }, null, now)
    // Bare batches: no AccountDO runs, so what the rows say was decided by the inserts themselves.
    await db.batch([insertEvent(db, t.tenantId, 'custom', restricted, now), insertEvent(db, t.tenantId, 'custom', connected, now)])
    const rows = await env.DB.prepare(
      "SELECT type, dispatched_at FROM events WHERE tenant_id = ? AND type IN ('account.restricted', 'account.connected') AND created_at = ?"
    )
      .bind(t.tenantId, now)
      .all<{ type: string; dispatched_at: number | null }>()
    expect(Object.fromEntries(rows.results.map((r) => [r.type, r.dispatched_at]))).toEqual({ 'account.restricted': null, 'account.connected': now })
  })

  it('are not delivered to a subscription made after them; later events are, once each', async () => {
    const t = await newTenant()
    await connectCustom(t)
    await pushInbound(t, { body: 'before', fromId: 'user-6' })
    const { ch, webhook } = await subscribe(t, ['message.received'])
    await pushInbound(t, { body: 'after', fromId: 'user-6' })
    const [got] = await ch.waitFor(1)
    expect(JSON.parse(got!.body).message.text).toBe('after')
    await settledLog(t, webhook.name, 1)
    await until(async () => (await undispatched(t.tenantId)) === 0, 'events dispatched')
    expect(await ch.log()).toHaveLength(1)
  })
})

describe('message.sent and message.failed', () => {
  it('carries the outbound message with status sent, error null', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const { ch } = await subscribe(t, ['message.sent', 'message.failed'])
    const inbound = await pushInbound(t, { body: 'hi', fromId: 'user-5', firstName: 'Bo' })
    const sent = await send(t, { to: { contact_id: inbound.body.contact_id }, text: 'Reply!' })
    expect(sent.status).toBe(202)
    const [r] = await ch.waitFor(1)
    expect(payloadOf(r!)).toEqual({
      event: 'message.sent',
      created_at: ISO,
      account_id: 'custom',
      channel: 'custom',
      message: { id: sent.body.message_id, direction: 'outbound', text: 'Reply!', media: null, status: 'sent', error: null },
      contact: { id: inbound.body.contact_id, phone: null, name: 'Bo' },
    })
    expect(r!.headers['x-webhook-event']).toBe('message.sent')
  })

  it('carries status failed with the reason as a plain string', async () => {
    const t = await newTenant()
    const bridge = await connectCustom(t)
    await bridge.behave({ status: 500 })
    const { ch } = await subscribe(t, ['message.failed'])
    const inbound = await pushInbound(t, { body: 'hi', fromId: 'user-6' })
    const sent = await send(t, { to: { contact_id: inbound.body.contact_id }, text: 'Will fail', media_url: 'https://cdn.example.com/a.png' })
    const [r] = await ch.waitFor(1)
    expect(payloadOf(r!)).toEqual({
      event: 'message.failed',
      created_at: ISO,
      account_id: 'custom',
      channel: 'custom',
      message: {
        id: sent.body.message_id,
        direction: 'outbound',
        text: 'Will fail',
        media: { url: 'https://cdn.example.com/a.png', content_type: 'image/png' },
        status: 'failed',
        error: 'the custom channel webhook answered HTTP 500',
      },
      contact: { id: inbound.body.contact_id, phone: null, name: null },
    })
  })
})

describe('message.delivered and message.read', () => {
  it('fans out events committed by any producer through commitEvents', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const { ch } = await subscribe(t, ['message.delivered', 'message.read'])
    const db = database(env.DB)
    const now = Date.now()
    const facts = { id: 'msg_x', accountId: 'custom', direction: 'outbound' as const, text: 'out', mediaUrl: null, mediaContentType: null, errorMessage: null }
    const contact = { id: 'con_x', phone: '+15551234567', name: 'Cy', external_id: null }
    await commitEvents(env, db, [
      insertEvent(db, t.tenantId, 'custom', messageEventPayload('message.delivered', { ...facts, status: 'delivered' }, contact, 'custom', now), now),
      insertEvent(db, t.tenantId, 'custom', messageEventPayload('message.read', { ...facts, status: 'read' }, contact, 'custom', now), now),
    ])
    const got = await ch.waitFor(2)
    const byEvent = Object.fromEntries(got.map((r) => [r.headers['x-webhook-event'], payloadOf(r)]))
    for (const status of ['delivered', 'read']) {
      expect(byEvent[`message.${status}`]).toEqual({
        event: `message.${status}`,
        created_at: ISO,
        account_id: 'custom',
        channel: 'custom',
        message: { id: 'msg_x', direction: 'outbound', text: 'out', media: null, status, error: null },
        contact: { id: 'con_x', phone: '+15551234567', name: 'Cy' },
      })
    }
  })
})

describe('account events', () => {
  it('account.connected and account.disconnected carry the account object; the last one goes out after the account is removed', async () => {
    const t = await newTenant()
    const { ch } = await subscribe(t, ['account.connected', 'account.disconnected'])
    const bridge = receiverChannel('bridge')
    expect((await api(t, 'PUT', '/channels/custom', { webhook_url: bridge.url })).status).toBe(200)
    const [connected] = await ch.waitFor(1)
    expect(payloadOf(connected!)).toEqual(customAccountEvent('account.connected', ISO, 'connected', null))
    expect((await api(t, 'DELETE', '/channels/custom')).status).toBe(200)
    const [, disconnected] = await ch.waitFor(2)
    expect(payloadOf(disconnected!)).toEqual(customAccountEvent('account.disconnected', ISO, 'disconnected', 'removed'))
  })

  it('account.limit_reached hides the account: null ids, status limited', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const { ch } = await subscribe(t, ['account.limit_reached'])
    for (let i = 0; i < 10; i++) expect((await send(t, { to: { external_id: `new-${i}` }, text: `Hello number ${i}` })).status).toBe(202)
    const [r] = await ch.waitFor(1)
    expect(payloadOf(r!)).toEqual({
      event: 'account.limit_reached',
      created_at: ISO,
      account_id: null,
      channel: null,
      account: { id: null, channel: null, identifier: null, status: 'limited', reason: 'new_contact_cap' },
    })
  })

  it('account.restricted fires when an opener burst stops the account', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const { ch } = await subscribe(t, ['account.restricted'])
    for (let i = 0; i < 6; i++) await send(t, { to: { external_id: `burst-${i}` }, text: 'Same opener for everyone' })
    const [r] = await ch.waitFor(1)
    expect(payloadOf(r!)).toEqual(customAccountEvent('account.restricted', ISO, 'restricted', 'opener_burst'))
  })
})

describe('POST /v1/webhooks/{webhookId}/test', () => {
  it('sends a signed sample of the default delivery event and reports success', async () => {
    const t = await newTenant()
    const { ch, secret } = await subscribe(t, ['message.received'], { name: 'probe', generate_signing_secret: true })
    const res = await api<Record<string, unknown>>(t, 'POST', '/webhooks/probe/test')
    expect(res.status).toBe(200)
    expect(res.body).toEqual(TEST_DELIVERED)
    const [r] = await ch.log()
    expect(r!.headers['x-webhook-test']).toBe('true')
    expect(r!.headers['x-webhook-delivery']).toBe(res.body.delivery_id)
    expect(r!.verified).toBe(true)
    expect(r!.headers['x-webhook-signature']).toBe(independentSignature(secret!, r!))
    expect(r!.json).toMatchObject({ event: 'message.delivered', message: { direction: 'outbound', status: 'delivered', error: null } })
  })

  it('sends the exact shape of any chosen event', async () => {
    const t = await newTenant()
    const { ch } = await subscribe(t, ['message.received'], { name: 'shapes' })
    await api(t, 'POST', '/webhooks/shapes/test', { event: 'account.limit_reached' })
    await api(t, 'POST', '/webhooks/shapes/test', { event: 'message.failed' })
    const [limit, failed] = await ch.log()
    expect(payloadOf(limit!)).toEqual({
      event: 'account.limit_reached',
      created_at: ISO,
      account_id: null,
      channel: null,
      account: { id: null, channel: null, identifier: null, status: 'limited', reason: 'daily_send_cap' },
    })
    expect(failed!.json).toMatchObject({ event: 'message.failed', message: { status: 'failed', error: expect.any(String) } })
    expect((await api(t, 'POST', '/webhooks/shapes/test', { event: 'message.nope' })).status).toBe(400)
  })

  it('answers 200 with delivered false and the failure, and never touches health counters', async () => {
    const t = await newTenant()
    const { ch } = await subscribe(t, ['message.received'], { name: 'down' })
    await ch.behave({ status: 503 })
    const res = await api(t, 'POST', '/webhooks/down/test', { event: 'message.received' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ success: true, delivered: false, status_code: 503, failure_type: 'temporary', error_message: 'answered HTTP 503' })
    expect(await health(t, 'down')).toBeNull()

    await ch.behave({ status: 404 })
    expect((await api(t, 'POST', '/webhooks/down/test')).body).toMatchObject({ delivered: false, status_code: 404, failure_type: 'permanent' })
    const dead = await createWebhook(t, { url: 'http://127.0.0.1:9/closed', subscribed_to: ['message.received'], name: 'closed' })
    expect(dead.webhook.name).toBe('closed')
    expect((await api(t, 'POST', '/webhooks/closed/test')).body).toMatchObject({ delivered: false, status_code: null, failure_type: 'network' })
    expect(await health(t, 'closed')).toBeNull()
    expect(await health(t, 'down')).toBeNull()
  })

  it('reports a timeout when the receiver is slower than the delivery timeout', async () => {
    const t = await newTenant()
    const { ch } = await subscribe(t, ['message.received'], { name: 'slow' })
    await ch.behave({ delay_ms: 1500 })
    const res = await api(t, 'POST', '/webhooks/slow/test')
    expect(res.body).toMatchObject({ delivered: false, status_code: null, failure_type: 'timeout' })
  })

  it('does not follow a redirect: a 3xx is a failure naming the target', async () => {
    const t = await newTenant()
    const { ch } = await subscribe(t, ['message.received'], { name: 'moved' })
    const target = receiverChannel('target')
    await ch.behave({ status: 301, headers: { location: target.url } })
    const res = await api<{ error_message: string }>(t, 'POST', '/webhooks/moved/test')
    expect(res.body).toMatchObject({ delivered: false, status_code: 301, failure_type: 'unknown' })
    expect(res.body.error_message).toContain(target.url)
    expect(await target.log()).toEqual([])
  })

  it('still needs a key', async () => {
    expect((await call('/v1/webhooks/x/test', { method: 'POST' })).status).toBe(401)
  })
})

describe('delivery identity inside the signed body', () => {
  it('carries event_id and delivery_id in the body, equal to the log and the X-Webhook-Delivery header', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const { ch, webhook } = await subscribe(t, ['message.received'], { name: 'ids', generate_signing_secret: true })
    await pushInbound(t, { body: 'who am I', fromId: 'user-ids' })
    const [r] = await ch.waitFor(1)
    const [row] = await settledLog(t, webhook.name, 1)
    expect(r!.json).toMatchObject({ event: 'message.received', event_id: row!.event_id, delivery_id: r!.headers['x-webhook-delivery'] })
    expect(row!.event_id).toMatch(/^evt_/)
    expect(r!.verified).toBe(true)
  })

  it('cannot be re-labelled: a body whose delivery_id or event_id was changed no longer verifies', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const { ch, secret } = await subscribe(t, ['message.received'], { name: 'tamper', generate_signing_secret: true })
    await pushInbound(t, { body: 'keep my id', fromId: 'user-tamper' })
    const [r] = await ch.waitFor(1)
    const delivery = r!.headers['x-webhook-delivery']!
    const json = r!.json as { event_id: string }
    expect(independentSignature(secret!, r!)).toBe(r!.headers['x-webhook-signature'])
    const relabelled = { ...r!, body: r!.body.replace(delivery, `dlv_${'x'.repeat(44)}`) }
    expect(relabelled.body).not.toBe(r!.body)
    expect(independentSignature(secret!, relabelled)).not.toBe(r!.headers['x-webhook-signature'])
    const otherEvent = { ...r!, body: r!.body.replace(json.event_id, `evt_${'y'.repeat(22)}`) }
    expect(otherEvent.body).not.toBe(r!.body)
    expect(independentSignature(secret!, otherEvent)).not.toBe(r!.headers['x-webhook-signature'])
  })

  it('names the test delivery in the body of POST /webhooks/{id}/test too', async () => {
    const t = await newTenant()
    const { ch, webhook } = await subscribe(t, ['message.delivered'], { name: 'test-ids', generate_signing_secret: true })
    const res = await api(t, 'POST', `/webhooks/${webhook.name}/test`)
    const [r] = await ch.waitFor(1)
    expect(r!.json).toMatchObject({ delivery_id: res.body.delivery_id, event_id: expect.stringMatching(/^evt_test_/) })
    expect(r!.headers['x-webhook-delivery']).toBe(res.body.delivery_id)
    expect(r!.verified).toBe(true)
  })

  it('samples message.approval_required with the status a held message has (awaiting_approval)', async () => {
    const t = await newTenant()
    const { ch, webhook } = await subscribe(t, ['message.approval_required'], { name: 'held-sample' })
    const res = await api(t, 'POST', `/webhooks/${webhook.name}/test`, { event: 'message.approval_required' })
    expect(res.body).toMatchObject({ delivered: true })
    const [r] = await ch.waitFor(1)
    expect(r!.json).toMatchObject({ event: 'message.approval_required', message: { direction: 'outbound', status: 'awaiting_approval' } })
  })

  it('takes an empty body sent as JSON as no body: the default test event goes out', async () => {
    const t = await newTenant()
    const { ch, webhook } = await subscribe(t, ['message.delivered'], { name: 'empty-json' })
    const res = await call(`/v1/webhooks/${webhook.name}/test`, { method: 'POST', key: t.key, headers: { 'Content-Type': 'application/json' } })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ success: true, delivered: true })
    const [r] = await ch.waitFor(1)
    expect(r!.headers['x-webhook-event']).toBe('message.delivered')
  })
})
