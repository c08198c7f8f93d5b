/**
 * Standard Webhooks headers on every delivery (issue 24 §3): beside spec 6's own headers, `webhook-id` (the delivery
 * id, the same on every retry), `webhook-timestamp` and `webhook-signature`, which the `standardwebhooks` npm package
 * verifies, run by the receiver over the raw body. The key derivation is checked against the package too.
 */
import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { standardHeaders, standardKey } from '../../../worker/webhooks/standard'
import { connectCustom, newTenant, pushInbound, receiverChannel } from '../helpers'
import { api, createWebhook } from '../webhook-helpers'

describe('Standard Webhooks headers on REST webhook deliveries', () => {
  it('sign a live delivery so the standardwebhooks package verifies it, next to the unchanged X-Webhook-Signature', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const ch = receiverChannel('std')
    const created = await createWebhook(t, { url: ch.url, subscribed_to: ['message.received'], generate_signing_secret: true })
    await ch.behave({ secret: created.signing_secret!, standard_secret: created.signing_secret! })
    await pushInbound(t, { body: 'hello', fromId: 'p-1' })
    const [r] = await ch.waitFor(1)
    expect(r!.standardVerified).toBe(true)
    expect(r!.verified).toBe(true)
    expect(r!.headers['webhook-id']).toBe(r!.headers['x-webhook-delivery'])
    expect(r!.headers['webhook-timestamp']).toBe(r!.headers['x-webhook-timestamp'])
    expect(r!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
  })

  it('carry the id and timestamp but no signature when signing is off', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const ch = receiverChannel('std-unsigned')
    await createWebhook(t, { url: ch.url, subscribed_to: ['message.received'] })
    await pushInbound(t, { body: 'hello', fromId: 'p-1' })
    const [r] = await ch.waitFor(1)
    expect(r!.headers['webhook-id']).toMatch(/^dlv_/)
    expect(r!.headers['webhook-timestamp']).toMatch(/^\d{10}$/)
    expect(r!.headers).not.toHaveProperty('webhook-signature')
  })

  it('come with test deliveries too', async () => {
    const t = await newTenant()
    const ch = receiverChannel('std-test')
    const created = await createWebhook(t, { url: ch.url, subscribed_to: ['message.delivered'], name: 'std', generate_signing_secret: true })
    await ch.behave({ standard_secret: created.signing_secret! })
    expect((await api(t, 'POST', '/webhooks/std/test', {})).status).toBe(200)
    const [r] = await ch.waitFor(1)
    expect(r!.standardVerified).toBe(true)
  })
})

describe('standardKey', () => {
  const body = '{"event":"message.sent"}'
  const signs = async (secret: string) => (await standardHeaders(secret, 'msg_1', 1_800_000_000, body))['webhook-signature']

  it('keys a whsec_ secret with its base64-decoded bytes, as new Webhook(secret) does', async () => {
    for (const secret of [`whsec_${btoa('k'.repeat(32))}`, `whsec_${'aZ09'.repeat(10)}abc`]) {
      expect(await signs(secret)).toBe(new Webhook(secret).sign('msg_1', new Date(1_800_000_000_000), body))
    }
    expect(standardKey(`whsec_${btoa('abc')}`)).toEqual(new TextEncoder().encode('abc'))
  })

  it("keys any other secret with its UTF-8 bytes, as new Webhook(secret, { format: 'raw' }) does", async () => {
    for (const secret of ['plain-secret', 'whsec_not*base64!']) {
      expect(await signs(secret)).toBe(new Webhook(secret, { format: 'raw' }).sign('msg_1', new Date(1_800_000_000_000), body))
    }
  })
})
