/**
 * Account queries (worker/db/accounts.ts) against real D1. `tenantAndAccounts` runs on every authenticated read and
 * send, `listAccounts` on every long-poll answer, both with statements compiled once per isolate and rows decoded by
 * hand (db/compiled.ts `rawRowReader`): they must answer exactly what Drizzle's own selects answer.
 */
import { env } from 'cloudflare:workers'
import { asc, eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { accounts, tenants } from '../../../schema/d1'
import { listAccounts, tenantAndAccounts } from '../../../worker/db/accounts'
import { database } from '../../../worker/db/client'
import { connectCustom, newTenant } from '../helpers'

const db = database(env.DB)

describe('tenantAndAccounts', () => {
  it('answers the tenant and its accounts as Drizzle maps them (booleans decoded, nulls kept, accounts in creation order)', async () => {
    const t = await newTenant()
    await connectCustom(t)
    // Flip the boolean columns away from their defaults, and set a nullable one, so a decoder left out would show.
    await db.update(tenants).set({ apiEnabled: false, alphaPasskeyLinking: true, messageRetentionDays: 7 }).where(eq(tenants.id, t.tenantId))
    const fresh = await tenantAndAccounts(db, t.tenantId)
    const [tenant] = await db.select().from(tenants).where(eq(tenants.id, t.tenantId))
    const rows = await db.select().from(accounts).where(eq(accounts.tenantId, t.tenantId)).orderBy(asc(accounts.createdAt), asc(accounts.id))
    expect(rows.length).toBe(1)
    expect(fresh).toStrictEqual({ tenant, accounts: rows })
    expect(fresh.tenant?.apiEnabled).toBe(false)
    expect(fresh.tenant?.alphaPasskeyLinking).toBe(true)
  })

  it('lists every account of the tenant in creation order, and no other tenant’s', async () => {
    const t = await newTenant()
    const other = await newTenant()
    const row = (tenantId: string, id: string, createdAt: number) =>
      ({ tenantId, id, channel: 'custom', identifier: id, status: 'connected', createdAt, updatedAt: createdAt }) as const
    await db
      .insert(accounts)
      .values([row(t.tenantId, 'b-later', 2000), row(t.tenantId, 'a-first', 1000), row(t.tenantId, 'c-tie', 2000), row(other.tenantId, 'x', 1500)])
    const fresh = await tenantAndAccounts(db, t.tenantId)
    expect(fresh.tenant?.id).toBe(t.tenantId)
    expect(fresh.accounts.map((a) => a.id)).toEqual(['a-first', 'b-later', 'c-tie'])
    expect(fresh.accounts[0]).toStrictEqual({ ...row(t.tenantId, 'a-first', 1000), statusReason: null, connectedAt: null })
  })

  it('answers no tenant and no accounts for an unknown tenant', async () => {
    expect(await tenantAndAccounts(db, 'no-such-tenant')).toStrictEqual({ tenant: undefined, accounts: [] })
  })
})

describe('listAccounts', () => {
  /** The query as Drizzle builds it per call: what the compiled statement must answer, object for object. */
  const reference = (tenantId: string) => db.select().from(accounts).where(eq(accounts.tenantId, tenantId)).orderBy(asc(accounts.createdAt), asc(accounts.id))

  it('answers the tenant’s accounts as Drizzle maps them, in creation order then id, and no other tenant’s', async () => {
    const t = await newTenant()
    const other = await newTenant()
    await db.insert(accounts).values([
      { tenantId: t.tenantId, id: 'b-later', channel: 'custom', identifier: 'b', status: 'connected', connectedAt: 2500, createdAt: 2000, updatedAt: 2600 },
      {
        tenantId: t.tenantId,
        id: 'a-first',
        channel: 'sms',
        identifier: '+15550001',
        status: 'restricted',
        statusReason: 'daily cap',
        createdAt: 1000,
        updatedAt: 1000,
      },
      { tenantId: t.tenantId, id: 'c-tie', channel: 'alpha_web', identifier: '+15550002', status: 'disconnected', createdAt: 2000, updatedAt: 2000 },
      { tenantId: other.tenantId, id: 'x', channel: 'custom', identifier: 'x', status: 'connected', createdAt: 1500, updatedAt: 1500 },
    ])
    const listed = await listAccounts(db, t.tenantId)
    expect(listed.map((a) => a.id)).toEqual(['a-first', 'b-later', 'c-tie'])
    expect(listed).toStrictEqual(await reference(t.tenantId))
    expect(await listAccounts(db, other.tenantId)).toStrictEqual(await reference(other.tenantId))
  })

  it('answers an empty list for a tenant without accounts', async () => {
    const t = await newTenant()
    expect(await listAccounts(db, t.tenantId)).toStrictEqual([])
    expect(await listAccounts(db, 'no-such-tenant')).toStrictEqual([])
  })
})
