// The placeholders for channels that are not built yet: 501 in the path family's shape, behind auth.
import { describe, expect, it } from 'vitest'
import { NOT_IMPLEMENTED } from '../../../worker/channels/planned'
import { body, call, newTenant } from '../helpers'

const concrete = (path: string) => path.replace(':phoneNumber', encodeURIComponent('+15551234567'))

describe('operations that are not built yet', () => {
  it('answer 501 with {success: false, error, error_code: 501} for every listed method and path', async () => {
    const t = await newTenant()
    for (const [method, path, what] of NOT_IMPLEMENTED) {
      const res = await call(`/v1${concrete(path)}`, { method, key: t.key, json: method === 'POST' || method === 'PUT' ? {} : undefined })
      expect(res.status, `${method} ${path}`).toBe(501)
      const json = await body(res)
      expect(json).toEqual({ success: false, error: expect.stringContaining('not available yet'), error_code: 501 })
      expect(json.error).toContain(what)
    }
  })

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
