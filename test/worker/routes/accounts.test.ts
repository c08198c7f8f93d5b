/** GET /v1/accounts (spec 4.1): every account of the key with every field of spec part 2 and today's limits. */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { admin, body, call, connectCustom, newTenant, pushInbound, send } from '../helpers'
import { addAccount, setClock } from '../state'

afterEach(() => {
  vi.useRealTimers()
})

type AccountsBody = { accounts: Record<string, unknown>[] }

async function accounts(key: string) {
  const res = await call('/v1/accounts', { key })
  return { status: res.status, body: await body<AccountsBody>(res) }
}

describe('GET /v1/accounts', () => {
  it('answers an empty list for a tenant without accounts', async () => {
    const t = await newTenant()
    expect(await accounts(t.key)).toEqual({ status: 200, body: { accounts: [] } })
  })

  it('lists each account with every field of the spec and its limits for today', async () => {
    setClock('2030-04-01T09:30:00.000Z')
    const t = await newTenant()
    await connectCustom(t)
    await pushInbound(t, { body: 'hi', fromId: 'a' })
    await send(t, { to: { external_id: 'a' }, text: 'reply' })
    await send(t, { to: { external_id: 'stranger' }, text: 'opener' })
    const r = await accounts(t.key)
    expect(r.body.accounts).toEqual([
      {
        id: 'custom',
        channel: 'custom',
        identifier: '127.0.0.1',
        status: 'connected',
        status_reason: null,
        connected_at: '2030-04-01T09:30:00.000Z',
        limits: { sends_today: 2, sends_cap: 50, new_contacts_today: 1, new_contacts_cap: 10, ramp_day: null },
        // Extension (issue 25): no network warned this account.
        risk: { at_risk: false, signals: [] },
      },
    ])
  })

  it('extends the channel enum with sms, social and custom, and lists accounts that are not connected, oldest first', async () => {
    setClock('2030-04-01T09:30:00.000Z')
    const t = await newTenant()
    await addAccount(t.tenantId, { id: '+15550001111', channel: 'alpha_web', status: 'connecting' })
    await addAccount(t.tenantId, { id: '+15550002222', channel: 'sms' })
    vi.setSystemTime(new Date('2030-04-01T09:31:00.000Z'))
    await addAccount(t.tenantId, { id: 'page-9', channel: 'social', identifier: 'My Page' })
    vi.setSystemTime(new Date('2030-04-01T09:32:00.000Z'))
    await addAccount(t.tenantId, { id: 'beta-1', channel: 'beta', status: 'disconnected', identifier: '@me' })
    const r = await accounts(t.key)
    expect(r.body.accounts.map((a) => [a.id, a.channel, a.status, a.connected_at])).toEqual([
      ['+15550001111', 'alpha_web', 'connecting', null],
      ['+15550002222', 'sms', 'connected', '2030-04-01T09:30:00.000Z'],
      ['page-9', 'social', 'connected', '2030-04-01T09:31:00.000Z'],
      ['beta-1', 'beta', 'disconnected', null],
    ])
    expect(r.body.accounts.map((a) => (a.limits as { ramp_day: number | null }).ramp_day)).toEqual([1, null, null, null])
  })

  it('starts the limits over at the next UTC day', async () => {
    setClock('2030-04-01T23:59:00.000Z')
    const t = await newTenant()
    await connectCustom(t)
    await send(t, { to: { external_id: 'x' }, text: 'late' })
    expect((await accounts(t.key)).body.accounts[0]).toMatchObject({ limits: { sends_today: 1, new_contacts_today: 1 } })
    vi.setSystemTime(new Date('2030-04-02T00:00:00.000Z'))
    expect((await accounts(t.key)).body.accounts[0]).toMatchObject({ limits: { sends_today: 0, new_contacts_today: 0 } })
  })

  it("never lists another tenant's accounts", async () => {
    const a = await newTenant()
    await connectCustom(a)
    const b = await newTenant()
    expect((await accounts(b.key)).body.accounts).toEqual([])
  })

  it('answers 401 in the messaging shape without a key', async () => {
    const res = await call('/v1/accounts')
    expect(res.status).toBe(401)
    expect(await body(res)).toEqual({ error_code: 'unauthorized', error: expect.any(String) })
  })

  it('answers 404 when the API is not enabled for the tenant', async () => {
    const t = await newTenant()
    await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { api_enabled: false } })
    const res = await call('/v1/accounts', { key: t.key })
    expect(res.status).toBe(404)
    expect(await body(res)).toEqual({ error_code: 'api_not_enabled', error: expect.any(String) })
  })
})
