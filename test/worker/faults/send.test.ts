/**
 * D1 failing in a send (issue 14 §6), real D1 and Durable Objects, a real HTTP receiver as the custom channel:
 * a send whose commit fails answers the documented retryable 503, was not queued and used none of the limits, and
 * its repeat is delivered once; a delivery sweep that D1 fails keeps its timer, so the queued message still goes
 * out once D1 is back, exactly once.
 */
import { runDurableObjectAlarm } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { TIMER_RETRY_MS } from '../../../worker/account/account-do'
import { DELIVERY_LEASE_MS } from '../../../worker/account/delivery'
import { accountStub } from '../../../worker/lib/objects'
import { body, call, connectCustom, newTenant, send, settled, type TestTenant } from '../helpers'
import { setClock } from '../state'
import { failD1 } from './d1-fault'

afterEach(() => vi.useRealTimers())

async function outbound(tenantId: string) {
  const r = await env.DB.prepare("SELECT id, text, status FROM messages WHERE tenant_id = ? AND direction = 'outbound' ORDER BY seq")
    .bind(tenantId)
    .all<{ id: string; text: string; status: string }>()
  return r.results
}

async function usage(t: TestTenant) {
  return body<{ sends: number; new_contacts: number }>(await call('/v1/usage', { key: t.key }))
}

describe('POST /v1/messages while D1 fails on commit', () => {
  it('answers 503 temporarily_unavailable with retry_after_s, queues nothing, uses no limit, and its repeat goes out once', async () => {
    const t = await newTenant()
    const ch = await connectCustom(t)
    const fault = await failD1('messages', 'INSERT', `NEW.tenant_id = '${t.tenantId}' AND NEW.direction = 'outbound'`)
    // Three failures: had they counted, the loop guard (3 since the person's last message) would refuse every retry.
    for (let i = 0; i < 3; i++) {
      const r = await send(t, { to: { external_id: 'person-1' }, text: `hello ${i}` })
      expect(r.status).toBe(503)
      expect(r.headers.get('Retry-After')).toBe('1')
      expect(r.body).toEqual({ error_code: 'temporarily_unavailable', error: expect.any(String), retry_after_s: 1 })
    }
    expect(await outbound(t.tenantId)).toEqual([])
    expect(await usage(t)).toMatchObject({ sends: 0, new_contacts: 0 })
    // The delivery timer armed before the failed write finds nothing to send.
    setClock(Date.now() + DELIVERY_LEASE_MS + 1)
    await runDurableObjectAlarm(accountStub(env, t.tenantId, 'custom'))
    vi.useRealTimers()
    expect(await ch.log()).toEqual([])

    await fault.heal()
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const r = await send(t, { to: { external_id: 'person-1' }, text: `hello ${i}` })
      expect(r.status).toBe(202)
      ids.push(String(r.body.message_id))
    }
    for (const id of ids) expect((await settled(t, id)).status).toBe('sent')
    const got = await ch.waitFor(3)
    expect(got.map((r) => (r.json as { messageId: string }).messageId)).toEqual(ids)
    expect(await usage(t)).toMatchObject({ sends: 3, new_contacts: 1 })
  })
})

describe('the delivery sweep while D1 fails', () => {
  it('keeps its timer, so a queued message is delivered once after D1 is back', async () => {
    const t = await newTenant()
    const ch = await connectCustom(t)
    const stub = accountStub(env, t.tenantId, 'custom')
    // Every attempt starts by marking the row (an UPDATE); while that fails the message can only stay queued.
    const fault = await failD1('messages', 'UPDATE', `NEW.tenant_id = '${t.tenantId}' AND NEW.text = 'stuck'`)
    const r = await send(t, { to: { external_id: 'person-2' }, text: 'stuck' })
    expect(r.status).toBe(202)
    const id = String(r.body.message_id)
    const start = Date.now()

    setClock(start + DELIVERY_LEASE_MS + 1)
    expect(await runDurableObjectAlarm(stub).catch(() => true)).toBe(true)
    expect((await outbound(t.tenantId)).map((m) => m.status)).toEqual(['queued'])
    await fault.heal()

    // D1 is back: the timer came back too, and its alarm finds the message and sends it.
    setClock(start + DELIVERY_LEASE_MS + 1 + TIMER_RETRY_MS)
    expect(await runDurableObjectAlarm(stub)).toBe(true)
    vi.useRealTimers()
    expect((await settled(t, id)).status).toBe('sent')
    const got = await ch.waitFor(1)
    expect(got.map((x) => (x.json as { messageId: string }).messageId)).toEqual([id])
    // Nothing is left to send: a later alarm (the webhooks timer the event armed) sends nothing again.
    setClock(start + 3 * DELIVERY_LEASE_MS + TIMER_RETRY_MS)
    await runDurableObjectAlarm(stub)
    vi.useRealTimers()
    expect((await ch.log()).map((x) => (x.json as { messageId: string }).messageId)).toEqual([id])
  })
})
