/**
 * D1 failing in the middle of a webhook fan-out (issue 14 §6), real D1, Durable Objects and a real HTTP receiver:
 * while the fan-out batch fails no event is sent, none is lost (the account's timer stays armed and fans them out once
 * D1 is back), and each reaches the subscriber exactly once.
 */
import { runDurableObjectAlarm } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { TIMER_RETRY_MS } from '../../../worker/account/account-do'
import { accountStub } from '../../../worker/lib/objects'
import { FAN_OUT_GRACE_MS } from '../../../worker/webhooks/outbox'
import { connectCustom, newTenant, pushInbound, receiverChannel } from '../helpers'
import { setClock } from '../state'
import { createWebhook } from '../webhook-helpers'
import { failD1 } from './d1-fault'

afterEach(() => vi.useRealTimers())

async function deliveryRows(tenantId: string) {
  const r = await env.DB.prepare('SELECT count(*) AS n FROM webhook_deliveries WHERE tenant_id = ?').bind(tenantId).first<{ n: number }>()
  return r?.n ?? 0
}

describe('webhook fan-out while D1 fails', () => {
  it('sends nothing while the fan-out batch fails, then delivers every event exactly once', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const hook = receiverChannel('fanout')
    await createWebhook(t, { url: hook.url, subscribed_to: ['message.received'] })
    const stub = accountStub(env, t.tenantId, 'custom')
    // The second statement of the fan-out batch (marking the events dispatched) fails, after the deliveries insert.
    const fault = await failD1('events', 'UPDATE', `OLD.tenant_id = '${t.tenantId}' AND NEW.dispatched_at IS NOT NULL`)
    const ids: string[] = []
    for (const text of ['one', 'two', 'three']) {
      const r = await pushInbound(t, { body: text, fromId: 'f1', messageSid: `W-${text}` })
      expect(r.status).toBe(200)
      ids.push(String(r.body.message_id))
    }
    const start = Date.now()
    setClock(start + FAN_OUT_GRACE_MS + 1)
    await runDurableObjectAlarm(stub)
    vi.useRealTimers()
    expect(await deliveryRows(t.tenantId)).toBe(0)
    expect(await hook.log()).toEqual([])

    await fault.heal()
    setClock(start + FAN_OUT_GRACE_MS + 1 + TIMER_RETRY_MS)
    expect(await runDurableObjectAlarm(stub)).toBe(true)
    vi.useRealTimers()
    const got = await hook.waitFor(3)
    const messageIds = got.map((r) => (r.json as { message: { id: string } }).message.id)
    expect(messageIds.sort()).toEqual([...ids].sort())
    expect(new Set(got.map((r) => r.headers['x-webhook-delivery'])).size).toBe(3)

    // Later alarms and a repeated push send nothing again.
    expect((await pushInbound(t, { body: 'one', fromId: 'f1', messageSid: 'W-one' })).body.duplicate).toBe(true)
    setClock(start + 10 * TIMER_RETRY_MS)
    await runDurableObjectAlarm(stub)
    vi.useRealTimers()
    expect(await hook.log()).toHaveLength(3)
    expect(await deliveryRows(t.tenantId)).toBe(3)
  })
})
