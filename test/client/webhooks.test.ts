/**
 * The client's verifyWebhook against signatures the Worker's own signer makes (worker/webhooks/signing.ts): a
 * genuine delivery verifies, and each way a delivery can be forged, replayed or mangled is refused with its reason.
 */
import { describe, expect, it } from 'vitest'
import { verifyWebhook, WEBHOOK_TOLERANCE_S } from '../../client/src/index'
import { signatureFor } from '../../worker/webhooks/signing'

const SECRET = 'whsec_0123456789abcdefghijABCDEFGHIJklmnopqrstu'
const NOW_S = 1_790_000_000
const body = JSON.stringify({ event: 'message.received', created_at: '2026-09-21T12:00:00.000Z', event_id: 'evt_1', delivery_id: 'dlv_1' })

async function delivery(over: { ts?: number; body?: string; secret?: string; deliveryHeader?: string } = {}) {
  const ts = over.ts ?? NOW_S
  return {
    'x-webhook-timestamp': String(ts),
    'x-webhook-signature': await signatureFor(over.secret ?? SECRET, ts, over.body ?? body),
    'x-webhook-delivery': over.deliveryHeader ?? 'dlv_1',
  }
}

describe('verifyWebhook', () => {
  it('returns the event of a genuine delivery, from Node headers, a Headers object or raw bytes', async () => {
    const headers = await delivery()
    await expect(verifyWebhook({ secret: SECRET, headers, body, nowS: NOW_S })).resolves.toMatchObject({ event: 'message.received', delivery_id: 'dlv_1' })
    await expect(verifyWebhook({ secret: SECRET, headers: new Headers(headers), body: new TextEncoder().encode(body), nowS: NOW_S })).resolves.toMatchObject({
      event_id: 'evt_1',
    })
  })

  it('accepts a delivery exactly 5 minutes old and refuses one a second older', async () => {
    const at = await delivery({ ts: NOW_S - WEBHOOK_TOLERANCE_S })
    await expect(verifyWebhook({ secret: SECRET, headers: at, body, nowS: NOW_S })).resolves.toBeTruthy()
    const late = await delivery({ ts: NOW_S - WEBHOOK_TOLERANCE_S - 1 })
    await expect(verifyWebhook({ secret: SECRET, headers: late, body, nowS: NOW_S })).rejects.toMatchObject({ reason: 'too_old' })
  })

  it('refuses a wrong secret, an altered body, a missing signature and a bad timestamp', async () => {
    const headers = await delivery()
    await expect(verifyWebhook({ secret: `${SECRET}x`, headers, body, nowS: NOW_S })).rejects.toMatchObject({ reason: 'bad_signature' })
    await expect(verifyWebhook({ secret: SECRET, headers, body: body.replace('dlv_1', 'dlv_2'), nowS: NOW_S })).rejects.toMatchObject({
      reason: 'bad_signature',
    })
    await expect(verifyWebhook({ secret: SECRET, headers: { ...headers, 'x-webhook-signature': 'v1=zz' }, body, nowS: NOW_S })).rejects.toMatchObject({
      reason: 'bad_signature',
    })
    await expect(verifyWebhook({ secret: SECRET, headers: { ...headers, 'x-webhook-signature': undefined }, body, nowS: NOW_S })).rejects.toMatchObject({
      reason: 'no_signature',
    })
    await expect(verifyWebhook({ secret: SECRET, headers: { ...headers, 'x-webhook-timestamp': 'yesterday' }, body, nowS: NOW_S })).rejects.toMatchObject({
      reason: 'bad_timestamp',
    })
  })

  it('refuses a signed body re-sent under another X-Webhook-Delivery', async () => {
    const headers = await delivery({ deliveryHeader: 'dlv_other' })
    await expect(verifyWebhook({ secret: SECRET, headers, body, nowS: NOW_S })).rejects.toMatchObject({ reason: 'delivery_mismatch' })
  })
})
