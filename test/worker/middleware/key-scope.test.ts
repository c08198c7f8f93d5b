/**
 * The key-scope check's shortcut for the commonest call: an owner's read passes without its route being looked up
 * (nothing decides or audits it), while every other call is still decided and audited by the route Hono runs.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { keyClock } from '../../../worker/middleware/key-scope'
import { body, call, connectCustom, newTenant, type TestTenant } from '../helpers'
import { adminKey } from '../safety/helpers'

type Entry = { route: string; outcome: string; code: string | null; key_id: string | null }

async function entries(t: TestTenant): Promise<Entry[]> {
  const res = await call('/v1/audit?limit=100', { key: t.key })
  expect(res.status).toBe(200)
  return (await body<{ entries: Entry[] }>(res)).entries
}

afterEach(() => {
  keyClock.now = () => Date.now()
})

describe('keyScope', () => {
  it('lets an owner’s reads through unaudited, and still audits the owner’s changes under their route', async () => {
    const t = await newTenant()
    expect((await call('/v1/usage', { key: t.key })).status).toBe(200)
    expect((await call('/v1/channels/custom', { key: t.key })).status).toBe(200)
    await connectCustom(t)
    expect((await entries(t)).map((e) => [e.route, e.outcome])).toEqual([['PUT /v1/channels/custom', 'accepted']])
  })

  it('still refuses and audits, under its route, a read by an expired key and one naming an account outside the key’s list', async () => {
    const t = await newTenant()
    const expiring = await adminKey(t.tenantId, { expires_at: new Date(Date.now() + 3_600_000).toISOString(), label: 'agent' })
    const listed = await adminKey(t.tenantId, { scope: 'read', label: 'reader', accounts: ['+15550001'] })
    expect((await call('/v1/messages?account_id=custom', { key: listed.key })).status).toBe(403)
    keyClock.now = () => Date.now() + 7_200_000
    const expired = await call('/v1/usage', { key: expiring.key })
    expect(expired.status).toBe(403)
    expect(await body(expired)).toMatchObject({ error_code: 'key_expired' })
    keyClock.now = () => Date.now()
    expect((await entries(t)).map((e) => [e.route, e.code])).toEqual([
      ['GET /v1/usage', 'key_expired'],
      ['GET /v1/messages', 'key_account'],
    ])
  })
})
