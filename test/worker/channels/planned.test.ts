// The place for channels that are not built yet (none are left): channel routes stay behind auth and unshadowed.
import { describe, expect, it } from 'vitest'
import { body, call, newTenant } from '../helpers'

describe('channel routes', () => {
  it('ask for the API key first', async () => {
    const res = await call('/v1/channels/sms', { method: 'GET' })
    expect(res.status).toBe(401)
  })

  it('leave other methods on the same paths unrouted', async () => {
    const t = await newTenant()
    const res = await call('/v1/channels/sms', { method: 'PUT', key: t.key, json: {} })
    expect(res.status).toBe(404)
  })

  it('do not shadow the built custom channel mounted before them', async () => {
    const t = await newTenant()
    const res = await call('/v1/channels/custom', { key: t.key })
    expect(res.status).toBe(200)
    expect(await body(res)).toMatchObject({ status: 'not_connected' })
  })
})
