/**
 * GET /admin/metrics: the edge's figures in Prometheus text for the admin token only: accounts by channel and status,
 * messages in and out and limit hits from the accounts' own tallies, and the webhook backlog and failures.
 */
import { describe, expect, it } from 'vitest'
import { admin, call, connectCustom, newTenant, pushInbound, receiverChannel, send } from '../helpers'

async function scrape(): Promise<{ text: string; value(name: string, labels?: Record<string, string>): number }> {
  const res = await admin('/admin/metrics')
  expect(res.status).toBe(200)
  expect(res.headers.get('Content-Type')).toMatch(/^text\/plain; version=0\.0\.4/)
  const text = await res.text()
  return {
    text,
    value(name, labels = {}) {
      let sum = 0
      for (const line of text.split('\n')) {
        const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line)
        if (!m || m[1] !== name) continue
        const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]))
        if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3])
      }
      return sum
    },
  }
}

describe('GET /admin/metrics', () => {
  it('refuses a caller without the admin token', async () => {
    expect((await call('/admin/metrics')).status).toBe(401)
    const t = await newTenant()
    expect((await call('/admin/metrics', { key: t.key })).status).toBe(401)
  })

  it('counts accounts, messages in and out and limit hits after real traffic, naming no tenant or contact', async () => {
    const before = await scrape()
    const t = await newTenant()
    await connectCustom(t)
    for (const n of [1, 2]) expect((await pushInbound(t, { body: `hello ${n}`, fromId: 'person-1', messageSid: `m-${n}` })).status).toBe(200)
    // The loop guard allows 3 messages to one person until they write again: the 4th is a limit hit.
    const codes: number[] = []
    for (const n of [1, 2, 3, 4]) codes.push((await send(t, { to: { external_id: 'person-1' }, text: `reply ${n}` })).status)
    expect(codes).toEqual([202, 202, 202, 429])

    const after = await scrape()
    const delta = (name: string, labels: Record<string, string>) => after.value(name, labels) - before.value(name, labels)
    expect(delta('gateway_accounts', { channel: 'custom', status: 'connected' })).toBe(1)
    expect(delta('gateway_messages_total', { channel: 'custom', direction: 'inbound' })).toBe(2)
    expect(delta('gateway_messages_total', { channel: 'custom', direction: 'outbound' })).toBe(3)
    expect(delta('gateway_limit_hits_total', { channel: 'custom', code: 'loop_guard' })).toBe(1)
    for (const name of [
      'gateway_webhook_deliveries_pending',
      'gateway_webhook_deliveries_overdue',
      'gateway_webhook_urls_failing',
      'gateway_webhook_urls_paused',
    ])
      expect(after.text).toMatch(new RegExp(`^${name} \\d+$`, 'm'))
    expect(after.text).toMatch(/^gateway_webhook_attempts_total\{outcome="failure"\} \d+$/m)
    expect(after.value('gateway_metrics_accounts_unread')).toBe(0)
    expect(after.text).not.toContain(t.tenantId)
    expect(after.text).not.toContain('person-1')
  })

  it('counts a failed webhook delivery and its URL as failing', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const events = receiverChannel('failing-events')
    await events.behave({ status: 500 })
    const before = await scrape()
    const hook = await call('/v1/webhooks', { method: 'POST', key: t.key, json: { url: events.url, subscribed_to: ['message.received'] } })
    expect(hook.status).toBe(201)
    expect((await pushInbound(t, { body: 'hi', fromId: 'person-2', messageSid: 'h-1' })).status).toBe(200)
    expect(await events.waitFor(1)).toHaveLength(1)
    const failures = async () => (await scrape()).value('gateway_webhook_attempts_total', { outcome: 'failure' })
    await expect.poll(failures).toBe(before.value('gateway_webhook_attempts_total', { outcome: 'failure' }) + 1)
    const after = await scrape()
    expect(after.value('gateway_webhook_urls_failing') - before.value('gateway_webhook_urls_failing')).toBe(1)
  })
})
