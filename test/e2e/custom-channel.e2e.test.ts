/**
 * Black box against the real local server (wrangler dev), called through the typed client (client/) as a user would:
 * a tenant connects the custom channel to a local receiver, a person writes in, the client's wait loop receives it,
 * the reply reaches the receiver while its status turns sent, and the signed message.received delivery verifies
 * with the client's verifyWebhook. A refusal arrives as the client's typed error of its family.
 */
import { describe, expect, it } from 'vitest'
import { createGateway, MessagingError, StatusError, verifyWebhook } from '../../client/src/index'
import type { Received } from '../fixtures/receiver-types'
import { localSuite } from './local-suite'

const local = localSuite()

async function delivery(channel: string, timeoutMs = 10_000): Promise<Received> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const got = local.receiver.log(channel)[0]
    if (got) return got
    if (Date.now() > deadline) throw new Error(`nothing delivered to ${channel}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe('custom channel end to end on the local server, through the typed client', () => {
  it('takes an inbound message to the wait loop, a reply to the receiver with status sent, and a signed webhook', async () => {
    const { key } = await local.server.newTenant()
    const gw = createGateway({ baseUrl: local.server.url, apiKey: key })
    const connected = await gw.call(gw.api.PUT('/channels/custom', { body: { webhook_url: `${local.receiver.url}/r/bridge?token=abc` } }))
    expect(connected).toMatchObject({ status: 'connected', webhook_url: `${local.receiver.url}/***` })
    const hook = await gw.call(
      gw.api.POST('/webhooks', { body: { url: `${local.receiver.url}/r/events`, subscribed_to: ['message.received'], generate_signing_secret: true } })
    )
    expect(hook.signing_secret).toMatch(/^whsec_/)

    // A cursor first, so the push below cannot land before the loop's first wait is open.
    const { cursor } = await gw.messages.wait({ timeout_s: 0 })
    const stream = gw.messages.stream({ cursor, timeoutS: 20 })
    const next = stream[Symbol.asyncIterator]().next()
    const pushed = await gw.call(
      gw.api.POST('/channels/custom/inbound', { body: { customData: { body: 'Is the shop open?', fromId: 'user-7', firstName: 'Ada' } } })
    )
    expect(pushed).toMatchObject({ duplicate: false })
    const got = await next
    expect(got.done).toBe(false)
    const message = got.value!
    expect(message.text).toBe('Is the shop open?')
    expect(message.contact.external_id).toBe('user-7')

    const reply = await gw.messages.send({ to: { contact_id: message.contact.id }, text: 'Yes, until 6pm.' })
    expect(reply.status).toBe('queued')
    await expect.poll(async () => (await gw.messages.get(reply.message_id)).status, { timeout: 10_000, interval: 50 }).toBe('sent')
    const bridged = local.receiver.log('bridge')
    expect(bridged).toHaveLength(1)
    expect(bridged[0]!.path).toBe('/r/bridge?token=abc')
    expect(bridged[0]!.json).toMatchObject({
      messageId: reply.message_id,
      contactId: message.contact.id,
      toId: 'user-7',
      body: 'Yes, until 6pm.',
      isVoiceNote: false,
    })

    const signed = await delivery('events')
    const event = await verifyWebhook({ secret: hook.signing_secret!, headers: signed.headers, body: signed.body })
    expect(event).toMatchObject({ event: 'message.received', message: { id: message.id, text: 'Is the shop open?' } })
    await expect(verifyWebhook({ secret: 'whsec_wrong', headers: signed.headers, body: signed.body })).rejects.toMatchObject({ reason: 'bad_signature' })
  })

  it('throws the typed error of each family: messaging codes and HTTP-status errors', async () => {
    const { key } = await local.server.newTenant()
    const gw = createGateway({ baseUrl: `${local.server.url}/v1`, apiKey: key })
    const refused = await gw.messages.send({ to: { phone: '+15550001111' }, text: 'hi' }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(MessagingError)
    expect(refused).toMatchObject({ code: 'no_connected_account', status: 409 })
    const missing = await gw.call(gw.api.GET('/webhooks/{webhookId}', { params: { path: { webhookId: 'wh_missing' } } })).catch((e: unknown) => e)
    expect(missing).toBeInstanceOf(StatusError)
    expect(missing).toMatchObject({ code: 404, status: 404 })
    const anonymous = createGateway({ baseUrl: local.server.url, apiKey: 'svc_live_not-a-key' })
    await expect(anonymous.usage.get()).rejects.toMatchObject({ name: 'MessagingError', code: 'unauthorized', status: 401 })
  })

  it('answers a burst of concurrent pushes and reads with one key, every one, and the wait gets each message once', async () => {
    // The request limits are sampled per key (docs/security.md): concurrent requests of one key share the credit of an
    // ask in flight, through the real bindings of wrangler dev. That no request waits on another's ask (it would hang
    // in workerd) is pinned deterministically in test/worker/middleware/rate-limit.test.ts.
    const { key } = await local.server.newTenant()
    const gw = createGateway({ baseUrl: local.server.url, apiKey: key })
    await gw.call(gw.api.PUT('/channels/custom', { body: { webhook_url: `${local.receiver.url}/r/burst` } }))
    const { cursor } = await gw.messages.wait({ timeout_s: 0 })
    const texts = Array.from({ length: 40 }, (_, i) => `burst ${i}`)
    const answers = await Promise.all([
      ...texts.map((text, i) => gw.call(gw.api.POST('/channels/custom/inbound', { body: { customData: { body: text, fromId: `p${i % 5}` } } }))),
      ...Array.from({ length: 20 }, () => gw.usage.get()),
    ])
    expect(answers).toHaveLength(60)
    const seen: string[] = []
    let at = cursor
    while (seen.length < texts.length) {
      const page = await gw.messages.wait({ cursor: at, timeout_s: 5 })
      if (page.messages.length === 0) break
      seen.push(...page.messages.map((m) => m.text))
      at = page.cursor
    }
    expect(seen.sort()).toEqual([...texts].sort())
  })
})
