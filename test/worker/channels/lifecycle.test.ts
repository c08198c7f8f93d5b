/**
 * The account lifecycle every channel uses: the plan's cap counts accounts that hold a place (connected or being
 * connected), a disconnected one frees its place, and concurrent connects cannot both slip under the cap (spec 1, 2
 * and 8).
 */
import { describe, expect, it } from 'vitest'
import { addAccount as addVia } from '../../../worker/channels/lifecycle'
import { getAccount } from '../../../worker/db/accounts'
import { getTenant } from '../../../worker/db/tenants'
import { ApiError } from '../../../worker/errors'
import { body, call, connectCustom, newTenant, receiverChannel, type TestTenant } from '../helpers'
import { addAccount, db } from '../state'

async function tenantRow(t: TestTenant) {
  const row = await getTenant(db, t.tenantId)
  if (!row) throw new Error('no tenant')
  return row
}

async function accountsOf(t: TestTenant) {
  return (await body<{ accounts: { id: string; status: string; connected_at: string | null }[] }>(await call('/v1/accounts', { key: t.key }))).accounts
}

describe('the account cap', () => {
  it('refuses a second account on the free plan while the first is connected', async () => {
    const t = await newTenant()
    await connectCustom(t)
    const res = await call('/v1/channels/alpha-web/connections', { method: 'POST', key: t.key, json: { phone_number: '+15550001001' } })
    expect(res.status).toBe(409)
    expect(await body(res)).toMatchObject({ success: false, error_code: 409 })
  })

  it('no longer counts an account that is disconnected, and still lists it in accounts_total', async () => {
    const t = await newTenant()
    await addAccount(t.tenantId, { id: '+15550001002', channel: 'alpha_web', status: 'disconnected' })
    const ch = receiverChannel('cap')
    const res = await call('/v1/channels/custom', { method: 'PUT', key: t.key, json: { webhook_url: ch.url } })
    expect(res.status).toBe(200)
    const usage = await body<{ accounts_total: number; accounts_connected: number; accounts_cap: number }>(await call('/v1/usage', { key: t.key }))
    expect(usage).toMatchObject({ accounts_total: 2, accounts_connected: 1, accounts_cap: 1 })
  })

  it('counts an account that is still connecting', async () => {
    const t = await newTenant()
    await addAccount(t.tenantId, { id: '+15550001003', channel: 'alpha_web', status: 'connecting' })
    const ch = receiverChannel('cap2')
    const res = await call('/v1/channels/custom', { method: 'PUT', key: t.key, json: { webhook_url: ch.url } })
    expect(res.status).toBe(409)
  })

  it('lets only one of two concurrent connects of different accounts through', async () => {
    const t = await newTenant()
    const tenant = await tenantRow(t)
    const now = Date.now()
    const results = await Promise.allSettled([
      addVia(db, tenant, { id: '+15550001004', channel: 'alpha_web', identifier: '+15550001004', status: 'connecting' }, now),
      addVia(db, tenant, { id: '+15550001005', channel: 'alpha_web', identifier: '+15550001005', status: 'connecting' }, now),
    ])
    const added = results.filter((r) => r.status === 'fulfilled')
    const refused = results.filter((r) => r.status === 'rejected')
    expect(added).toHaveLength(1)
    expect(refused).toHaveLength(1)
    const reason = (refused[0] as PromiseRejectedResult).reason
    expect(reason).toBeInstanceOf(ApiError)
    expect(reason).toMatchObject({ status: 409, code: 'account_cap_reached' })
    expect(await accountsOf(t)).toHaveLength(1)
  })

  it('brings a disconnected account back to connecting when its place is free, and refuses it when not', async () => {
    const t = await newTenant()
    const tenant = await tenantRow(t)
    await addAccount(t.tenantId, { id: '+15550001006', channel: 'alpha_web', status: 'disconnected' })
    const back = await addVia(db, tenant, { id: '+15550001006', channel: 'alpha_web', identifier: '+15550001006', status: 'connecting' }, Date.now())
    expect(back.account.status).toBe('connecting')
    expect((await getAccount(db, t.tenantId, '+15550001006'))?.status).toBe('connecting')

    const u = await newTenant()
    const other = await tenantRow(u)
    await addAccount(u.tenantId, { id: '+15550001007', channel: 'alpha_web', status: 'disconnected' })
    await connectCustom(u)
    await expect(
      addVia(db, other, { id: '+15550001007', channel: 'alpha_web', identifier: '+15550001007', status: 'connecting' }, Date.now())
    ).rejects.toMatchObject({
      status: 409,
      code: 'account_cap_reached',
    })
  })

  it('refuses an id already used by another channel with account_exists', async () => {
    const t = await newTenant()
    const tenant = await tenantRow(t)
    await addAccount(t.tenantId, { id: '+15550001008', channel: 'alpha_web', status: 'connected' })
    await expect(
      addVia(db, tenant, { id: '+15550001008', channel: 'beta', identifier: '+15550001008', status: 'connecting' }, Date.now())
    ).rejects.toMatchObject({
      status: 409,
      code: 'account_exists',
    })
  })
})
