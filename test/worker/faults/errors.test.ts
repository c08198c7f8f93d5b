/**
 * The retryable answer to a storage failure (issue 14 §6) in both error families and outside a batch: a write D1
 * refuses on its own (Drizzle wraps the D1 error in its `Failed query` error) still answers 503 with Retry-After.
 */
import { describe, expect, it } from 'vitest'
import { body, call, newTenant } from '../helpers'
import { failD1 } from './d1-fault'

describe('a single write D1 refuses', () => {
  it('answers 503 with Retry-After in the status family, and the repeat succeeds once D1 is back', async () => {
    const t = await newTenant()
    const fault = await failD1('webhooks', 'INSERT', `NEW.tenant_id = '${t.tenantId}'`)
    const create = () => call('/v1/webhooks', { method: 'POST', key: t.key, json: { url: 'https://hooks.example/x', subscribed_to: ['message.received'] } })
    const res = await create()
    expect(res.status).toBe(503)
    expect(res.headers.get('Retry-After')).toBe('1')
    expect(await body(res)).toEqual({ success: false, error: expect.any(String), error_code: 503 })
    await fault.heal()
    expect((await create()).status).toBe(201)
    expect((await body<{ webhooks: unknown[] }>(await call('/v1/webhooks', { key: t.key }))).webhooks).toHaveLength(1)
  })
})
