/**
 * One number, two transports: the phone sends when both exist and inbound from either lands on the same account;
 * GET /channels/sms; disconnecting one transport or the number; the MCP tools through the real endpoints; and the
 * secrets (auth token, gateway password) never in an answer or a log line.
 */
import { and, eq } from 'drizzle-orm'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { accounts, messages } from '../../../../schema/d1'
import { body, call, newTenant, send, settled } from '../../helpers'
import { callTool } from '../../mcp/rpc'
import { db, eventsOf } from '../../state'
import { connectPhone, connectTwilio, gateway, post, twilio } from './sms-helpers'

const NUMBER = '+447700900123'
const FROM = '+447700900888'

afterEach(() => {
  vi.restoreAllMocks()
})

describe('a number with both transports', () => {
  it('sends from the phone, and inbound from Twilio and from the phone land on the same account and contact', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const p = await connectPhone(t)
    expect(p.json).toMatchObject({ sends_via: 'android_gateway', twilio: { status: 'connected' }, android_gateway: { status: 'connected' } })
    expect(await db.select().from(accounts).where(eq(accounts.tenantId, t.tenantId))).toHaveLength(1)

    await post(await twilio.inbound(c.account_sid, { to: NUMBER, from: FROM, body: 'via twilio' }))
    await post(await gateway.event(p.username, { event: 'sms:received', payload: { messageId: 'm1', message: 'via phone', sender: FROM } }))
    const inbound = await db
      .select()
      .from(messages)
      .where(and(eq(messages.tenantId, t.tenantId), eq(messages.direction, 'inbound')))
    expect(inbound.map((m) => m.text).sort()).toEqual(['via phone', 'via twilio'])
    expect(new Set(inbound.map((m) => m.contactId)).size).toBe(1)
    expect(inbound.every((m) => m.accountId === NUMBER)).toBe(true)

    const id = String((await send(t, { to: { phone: FROM }, text: 'reply' })).body.message_id)
    expect((await settled(t, id)).status).toBe('sent')
    expect((await gateway.state(p.username)).messages.map((m) => m.id)).toEqual([id])
    expect((await twilio.state(c.account_sid)).messages).toEqual([])
  })

  it('GET /v1/channels/sms shows both transports, which one sends, and the last message times', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    await connectPhone(t)
    await post(await twilio.inbound(c.account_sid, { to: NUMBER, from: FROM, body: 'hi' }))
    const s = await body(await call('/v1/channels/sms', { key: t.key }))
    expect(s).toMatchObject({
      success: true,
      phone_number: NUMBER,
      status: 'connected',
      sends_via: 'android_gateway',
      twilio: { status: 'connected', live: true, account_sid: expect.stringMatching(/^AC.{2}…/) },
      android_gateway: { status: 'connected', live: true },
      last_inbound_at: expect.any(String),
      last_outbound_at: null,
    })
    expect(await body(await call(`/v1/channels/sms?phone_number=${encodeURIComponent('+447700900999')}`, { key: t.key }))).toMatchObject({
      status: 'not_connected',
    })
  })

  it('disconnecting the phone leaves Twilio sending; disconnecting the rest removes the number and clears Twilio', async () => {
    const t = await newTenant()
    const c = await connectTwilio(t)
    const p = await connectPhone(t)
    expect((await gateway.state(p.username)).webhooks.map((w) => w.event)).toContain('mms:downloaded')
    expect((await gateway.state(p.username)).webhooks).toHaveLength(5)
    const one = await body(await call('/v1/channels/sms?transport=android_gateway', { method: 'DELETE', key: t.key }))
    expect(one).toEqual({
      success: true,
      phone_number: NUMBER,
      status: 'transport_removed',
      removed: ['android_gateway'],
      remaining: ['twilio'],
      upstream_cleared: true,
    })
    expect((await gateway.state(p.username)).webhooks).toEqual([])
    const id = String((await send(t, { to: { phone: FROM }, text: 'now via twilio' })).body.message_id)
    expect((await settled(t, id)).status).toBe('sent')
    expect((await twilio.state(c.account_sid)).messages).toHaveLength(1)

    const all = await body(await call('/v1/channels/sms', { method: 'DELETE', key: t.key }))
    expect(all).toMatchObject({ status: 'removed', removed: ['twilio'], remaining: [] })
    expect((await twilio.state(c.account_sid)).numbers[0]!.sms_url).toBe('')
    expect(await db.select().from(accounts).where(eq(accounts.tenantId, t.tenantId))).toEqual([])
    expect(await eventsOf(t.tenantId, 'account.disconnected')).toHaveLength(1)
    // Idempotent, and inbound for the removed number stores nothing.
    expect(await body(await call('/v1/channels/sms', { method: 'DELETE', key: t.key }))).toMatchObject({ status: 'not_connected' })
    const late = await twilio.inbound(c.account_sid, { to: NUMBER, from: FROM, body: 'late' })
    expect((await post({ ...late, url: `https://gateway.test/v1/channels/sms/twilio/${t.tenantId}/447700900123/inbound` })).status).toBe(404)
  })

  it('removes the number even when the provider refuses the stored credentials, saying so', async () => {
    const t = await newTenant()
    const p = await connectPhone(t)
    await gateway.setPassword(p.username, 'changed-in-the-app')
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    const res = await body(await call('/v1/channels/sms?transport=all', { method: 'DELETE', key: t.key }))
    expect(res).toMatchObject({ status: 'removed', removed: ['android_gateway'], upstream_cleared: false })
    expect(await db.select().from(accounts).where(eq(accounts.tenantId, t.tenantId))).toEqual([])
    expect(errors).toHaveBeenCalled()
    for (const [line] of errors.mock.calls) expect(String(line)).not.toContain(p.password)
  })
})

describe('the SMS MCP tools', () => {
  it('connect_sms, get_sms_status, connect_android_sms, get_android_sms_status and disconnect_sms run their REST operations', async () => {
    const t = await newTenant()
    const acct = await twilio.createAccount([{ phone_number: NUMBER }])
    const connected = await callTool(t.key, 'connect_sms', { body: { account_sid: acct.account_sid, auth_token: acct.auth_token, phone_number: NUMBER } })
    expect(connected).toMatchObject({ status: 200, isError: false, json: { phone_number: NUMBER, sends_via: 'twilio' } })
    expect(connected.text).not.toContain(acct.auth_token)

    const user = await gateway.createUser()
    const phone = await callTool(t.key, 'connect_android_sms', { body: { username: user.username, password: user.password, phone_number: NUMBER } })
    expect(phone).toMatchObject({ status: 200, json: { webhook_url: expect.stringContaining('/android-gateway/') } })
    expect(phone.text).not.toContain(user.password)

    expect(await callTool(t.key, 'get_sms_status', {})).toMatchObject({ status: 200, json: { sends_via: 'android_gateway' } })
    expect(await callTool(t.key, 'get_android_sms_status', { phone_number: NUMBER })).toMatchObject({ status: 200, json: { status: 'connected' } })
    expect(await callTool(t.key, 'disconnect_sms', { transport: 'all' })).toMatchObject({ status: 200, json: { status: 'removed' } })
  })

  it('answer a refusal as an error result with the REST status', async () => {
    const t = await newTenant()
    const acct = await twilio.createAccount([{ phone_number: '+14155550100' }])
    const r = await callTool(t.key, 'connect_sms', { body: { account_sid: acct.account_sid, auth_token: acct.auth_token, phone_number: '+14155550100' } })
    expect(r).toMatchObject({ status: 409, isError: true })
  })
})

describe('secrets', () => {
  it('never puts the auth token or the gateway password in an answer or a log line, even when a provider fails', async () => {
    const t = await newTenant()
    const logged: string[] = []
    for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(' ')))
    }
    const c = await connectTwilio(t)
    const p = await connectPhone(t)
    const answers: string[] = [JSON.stringify(c.json), JSON.stringify(p.json)]
    for (const path of ['/v1/channels/sms', '/v1/channels/sms/android-gateway', '/v1/accounts']) {
      answers.push(await (await call(path, { key: t.key })).text())
    }
    // A provider failure is logged: make Twilio fail, then read the status and disconnect.
    await twilio.failSends(c.account_sid, 500)
    await gateway.setOnline(p.username, false)
    const id = String((await send(t, { to: { phone: FROM }, text: 'x' })).body.message_id)
    answers.push(JSON.stringify(await settled(t, id, 50)))
    answers.push(await (await call('/v1/channels/sms', { method: 'DELETE', key: t.key })).text())
    const wrong = await call('/v1/channels/sms/twilio', {
      method: 'POST',
      key: t.key,
      json: { account_sid: c.account_sid, auth_token: 'wrong-secret-value', phone_number: NUMBER },
    })
    answers.push(await wrong.text())
    for (const text of [...answers, ...logged]) {
      expect(text).not.toContain(c.auth_token)
      expect(text).not.toContain(p.password)
      expect(text).not.toContain('wrong-secret-value')
    }
  })
})

describe('OpenAPI', () => {
  it('describes the SMS operations with operationIds equal to their MCP tools, and no provider callback', async () => {
    const doc = await body<{ paths: Record<string, Record<string, { operationId?: string }>> }>(await call('/v1/openapi.json'))
    expect(doc.paths['/channels/sms/twilio']?.post?.operationId).toBe('connect_sms')
    expect(doc.paths['/channels/sms/android-gateway']?.post?.operationId).toBe('connect_android_sms')
    expect(doc.paths['/channels/sms/android-gateway']?.get?.operationId).toBe('get_android_sms_status')
    expect(doc.paths['/channels/sms']?.get?.operationId).toBe('get_sms_status')
    expect(doc.paths['/channels/sms']?.delete?.operationId).toBe('disconnect_sms')
    expect(Object.keys(doc.paths).filter((p) => p.includes('/inbound') && p.includes('sms'))).toEqual([])
  })
})
