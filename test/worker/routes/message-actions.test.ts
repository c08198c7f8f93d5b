/**
 * The chat action routes of issue 25 on the direct channels: reactions, read marks and typing reach a custom bridge
 * that opted in (as `action` POSTs to its URL), a bridge that did not and SMS answer 422 unsupported_on_channel naming
 * the channel, and each route refuses invalid input, an unknown message, another tenant's message and no key.
 */
import { describe, expect, it } from 'vitest'
import { body, call, newTenant, pushInbound, receiverChannel, send, settled, type TestTenant } from '../helpers'
import { connectTwilio } from '../channels/sms/sms-helpers'

async function optedInBridge(t: TestTenant, actions: boolean) {
  const ch = receiverChannel('actions')
  const res = await call('/v1/channels/custom', { method: 'PUT', key: t.key, json: { webhook_url: ch.url, actions } })
  expect(res.status).toBe(200)
  return ch
}

async function inbound(t: TestTenant, fromId: string): Promise<{ messageId: string; contactId: string }> {
  const r = await pushInbound(t, { body: 'hello', fromId, messageSid: `sid-${fromId}` })
  expect(r.status).toBe(200)
  return { messageId: String(r.body.message_id), contactId: String(r.body.contact_id) }
}

const post = (t: TestTenant | null, path: string, json?: unknown) =>
  call(path, { method: 'POST', ...(t ? { key: t.key } : {}), ...(json === undefined ? {} : { json }) })

describe('POST /v1/messages/{id}/reactions, /read and /accounts/{id}/typing on the custom channel', () => {
  it('hands reactions, read marks and typing to a bridge that opted in, and stores our reaction on the message', async () => {
    const t = await newTenant()
    const bridge = await optedInBridge(t, true)
    const { messageId, contactId } = await inbound(t, 'u-1')
    const reacted = await post(t, `/v1/messages/${messageId}/reactions`, { emoji: '👍' })
    expect(reacted.status, await reacted.clone().text()).toBe(200)
    expect(await body(reacted)).toMatchObject({ action: 'react', message_id: messageId, contact_id: contactId })
    expect((await body(await call(`/v1/messages/${messageId}`, { key: t.key }))).reactions).toEqual([{ emoji: '👍', from: 'me', at: expect.any(String) }])
    expect((await call(`/v1/messages/${messageId}/reactions`, { method: 'DELETE', key: t.key })).status).toBe(200)
    expect((await post(t, `/v1/messages/${messageId}/read`)).status).toBe(200)
    expect((await post(t, '/v1/accounts/custom/typing', { to: { external_id: 'u-1' } })).status).toBe(200)
    const got = (await bridge.waitFor(4)).map((r) => JSON.parse(r.body) as Record<string, unknown>)
    expect(got.map((p) => p.action)).toEqual(['react', 'unreact', 'read', 'typing'])
    expect(got[0]).toMatchObject({ messageId, messageSid: 'sid-u-1', emoji: '👍', toId: 'u-1' })
  })

  it('answers 422 unsupported_on_channel for a bridge that did not opt in, and for a lookup', async () => {
    const t = await newTenant()
    await optedInBridge(t, false)
    const { messageId } = await inbound(t, 'u-2')
    const refused = await post(t, `/v1/messages/${messageId}/reactions`, { emoji: '👍' })
    expect(refused.status).toBe(422)
    expect(await body(refused)).toMatchObject({ error_code: 'unsupported_on_channel' })
    const lookup = await call('/v1/accounts/custom/lookup?phone=%2B447700900123', { key: t.key })
    expect(lookup.status).toBe(422)
    expect(String((await body(lookup)).error)).toContain('custom channel')
  })

  it('refuses an invalid emoji (400), an unknown message (404), another tenant’s message (404) and no key (401)', async () => {
    const [t, other] = await Promise.all([newTenant(), newTenant()])
    await optedInBridge(t, true)
    await optedInBridge(other, true)
    const { messageId } = await inbound(t, 'u-3')
    expect(await body(await post(t, `/v1/messages/${messageId}/reactions`, { emoji: 'thumbs up' }))).toMatchObject({ error_code: 'invalid_emoji' })
    expect((await post(t, '/v1/messages/msg_nope/reactions', { emoji: '👍' })).status).toBe(404)
    expect((await post(other, `/v1/messages/${messageId}/reactions`, { emoji: '👍' })).status).toBe(404)
    expect((await post(other, `/v1/messages/${messageId}/read`)).status).toBe(404)
    expect((await post(null, `/v1/messages/${messageId}/reactions`, { emoji: '👍' })).status).toBe(401)
  })
})

describe('chat actions on SMS', () => {
  it('answer 422 unsupported_on_channel naming SMS: quoted replies, reactions, typing, lookups', async () => {
    const t = await newTenant()
    await connectTwilio(t)
    const sent = await send(t, { to: { phone: '+447700900555' }, text: 'Hello' })
    const id = String(sent.body.message_id)
    await settled(t, id)
    const answers = [
      await send(t, { to: { phone: '+447700900555' }, text: 'Quoting', reply_to: id }),
      { status: 0, body: await body(await post(t, `/v1/messages/${id}/reactions`, { emoji: '👍' })) },
      { status: 0, body: await body(await post(t, '/v1/accounts/%2B447700900123/typing', { to: { phone: '+447700900555' } })) },
      { status: 0, body: await body(await call('/v1/accounts/%2B447700900123/lookup?phone=%2B447700900555', { key: t.key })) },
    ]
    for (const a of answers) {
      expect(a.body).toMatchObject({ error_code: 'unsupported_on_channel' })
      expect(String(a.body.error)).toContain('SMS')
    }
  })
})
