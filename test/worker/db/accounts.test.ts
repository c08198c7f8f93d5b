/**
 * Account queries (worker/db/accounts.ts) against real D1. `tenantAndAccounts` runs on every authenticated read and
 * send with statements compiled once per isolate and rows decoded by hand (db/compiled.ts `rowReader`): it must
 * answer exactly what Drizzle's own selects answer.
 */
import { env } from 'cloudflare:workers'
import { asc, eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { accounts, tenants } from '../../../schema/d1'
import { tenantAndAccounts } from '../../../worker/db/accounts'
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

  it('answers no tenant and no accounts for an unknown tenant', async () => {
    expect(await tenantAndAccounts(db, 'no-such-tenant')).toStrictEqual({ tenant: undefined, accounts: [] })
  })
})
