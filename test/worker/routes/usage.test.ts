/** GET /v1/usage (spec 2 and 4.1): every field, on an injected clock. */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { admin, body, call, connectCustom, newTenant, pushInbound, send } from '../helpers'
import { addAccount, setClock } from '../state'

afterEach(() => {
  vi.useRealTimers()
})

async function usage(key: string) {
  const res = await call('/v1/usage', { key })
  return { status: res.status, body: await body(res) }
}

describe('GET /v1/usage', () => {
  it('answers every field of the spec for a fresh tenant', async () => {
    setClock('2030-05-06T07:08:09.000Z')
    const t = await newTenant()
    expect(await usage(t.key)).toEqual({
      status: 200,
      body: {
        plan: 'free',
        label: 'free (early access)',
        day: '2030-05-06',
        sends: 0,
        sends_cap: 50,
        new_contacts: 0,
        new_contacts_cap: 10,
        status: 'active',
        suspended_reason: null,
        accounts_total: 0,
        accounts_connected: 0,
        accounts_cap: 1,
        retention: { messages_days: 90, media_days: 30, audit_days: 90, webhook_log_days: 7 },
        risk: { at_risk: false, accounts: [] },
      },
    })
  })

  it("counts today's sends and new contacts, and the accounts added and connected", async () => {
    setClock('2030-05-06T07:08:09.000Z')
    const t = await newTenant()
    await connectCustom(t)
    await pushInbound(t, { body: 'hi', fromId: 'known' })
    await send(t, { to: { external_id: 'known' }, text: 'r1' })
    await send(t, { to: { external_id: 'new-1' }, text: 'o1' })
    await send(t, { to: { external_id: 'new-2' }, text: 'o2' })
    expect((await usage(t.key)).body).toMatchObject({ sends: 3, new_contacts: 2, accounts_total: 1, accounts_connected: 1, accounts_cap: 1 })
  })

  it('counts accounts that are added but not connected in accounts_total only', async () => {
    const t = await newTenant()
    await addAccount(t.tenantId, { id: '+15550001111', channel: 'alpha_web', status: 'connecting' })
    expect((await usage(t.key)).body).toMatchObject({ accounts_total: 1, accounts_connected: 0 })
  })

  it('names the new UTC day and starts from zero after midnight', async () => {
    setClock('2030-05-06T23:59:59.000Z')
    const t = await newTenant()
    await connectCustom(t)
    await send(t, { to: { external_id: 'n' }, text: 'x' })
    expect((await usage(t.key)).body).toMatchObject({ day: '2030-05-06', sends: 1 })
    vi.setSystemTime(new Date('2030-05-07T00:00:00.000Z'))
    expect((await usage(t.key)).body).toMatchObject({ day: '2030-05-07', sends: 0, new_contacts: 0 })
  })

  it("is not touched by another tenant's sends", async () => {
    const a = await newTenant()
    await connectCustom(a)
    await send(a, { to: { external_id: 'n' }, text: 'x' })
    const b = await newTenant()
    expect((await usage(b.key)).body).toMatchObject({ sends: 0, accounts_total: 0 })
  })

  it('answers 401 in the messaging shape without a key', async () => {
    const res = await call('/v1/usage')
    expect(res.status).toBe(401)
    expect(await body(res)).toEqual({ error_code: 'unauthorized', error: expect.any(String) })
  })

  it('answers 404 when the API is not enabled for the tenant', async () => {
    const t = await newTenant()
    await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { api_enabled: false } })
    expect((await usage(t.key)).status).toBe(404)
  })
})
