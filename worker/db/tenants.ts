/**
 * Tenant queries: the service's customers, their plan, suspension state and API/webhook switches.
 *
 * The row lives in the directory (what keys, the admin API and the retention cron read), and a copy lives on the
 * tenant's shard, because SQL there reads it in the same statement as the tenant's own rows: an event insert asks
 * whether webhooks are on, the fan-out joins it, a send reads the suspension fresh with its accounts in one round
 * trip, an account insert checks the cap against it. On shard 0 (the directory's own database) the two are one row.
 * Every change writes the shard's copy first and then the directory, so a failure between them leaves the
 * directory behind, never a tenant whose shard does not know it; the admin repeats a change that answered 503.
 */
import { eq } from 'drizzle-orm'
import { tenants } from '../../schema/d1'
import { newId } from '../lib/ids'
import type { Db } from './client'
import { DIRECTORY_SHARD } from './shards'

export type Tenant = typeof tenants.$inferSelect

/** A shard by number and handle. */
export type ShardRef = { shard: number; db: Db }

/**
 * The statement writing the shard's copy of a tenant row, or refreshing its switches: the suspension there is left as
 * it is, and so is what only the directory decides (placement, retention bookkeeping), for on shard 0 this row is the
 * directory's own.
 */
export function mirrorTenantStatement(db: Db, row: Tenant) {
  const { plan, apiEnabled, webhooksEnabled, messageRetentionDays, alphaPasskeyLinking } = row
  return db
    .insert(tenants)
    .values(row)
    .onConflictDoUpdate({ target: tenants.id, set: { plan, apiEnabled, webhooksEnabled, messageRetentionDays, alphaPasskeyLinking } })
}

export async function createTenant(dir: Db, home: ShardRef, plan: string, now: number): Promise<Tenant> {
  const row: Tenant = {
    id: newId('ten', 20),
    plan,
    status: 'active',
    suspendedReason: null,
    suspendedAt: null,
    apiEnabled: true,
    webhooksEnabled: true,
    createdAt: now,
    messageRetentionDays: null,
    retentionCheckedAt: 0,
    shard: home.shard,
    placement: 0,
    movingTo: null,
    alphaPasskeyLinking: false,
  }
  if (home.shard !== DIRECTORY_SHARD) await mirrorTenantStatement(home.db, row)
  const [created] = await dir.insert(tenants).values(row).returning()
  return created!
}

export async function getTenant(db: Db, id: string): Promise<Tenant | undefined> {
  return db.select().from(tenants).where(eq(tenants.id, id)).get()
}

export type TenantPatch = Partial<Pick<Tenant, 'plan' | 'apiEnabled' | 'webhooksEnabled' | 'messageRetentionDays' | 'alphaPasskeyLinking'>> & {
  status?: 'active'
}

/** Applies an admin change to the tenant's row on its shard and in the directory; answers the directory's row. */
export async function updateTenant(dir: Db, home: ShardRef, id: string, patch: TenantPatch): Promise<Tenant | undefined> {
  const values: Partial<Tenant> = { ...patch }
  // Lifting a suspension is the "review" of spec part 3: it clears the reason too.
  if (patch.status === 'active') Object.assign(values, { suspendedReason: null, suspendedAt: null })
  // A new retention takes effect at the next cron run, not when the sweep would next have visited the tenant.
  if (patch.messageRetentionDays !== undefined) values.retentionCheckedAt = 0
  if (Object.keys(values).length === 0) return getTenant(dir, id)
  if (home.shard !== DIRECTORY_SHARD) await home.db.update(tenants).set(values).where(eq(tenants.id, id))
  const [row] = await dir.update(tenants).set(values).where(eq(tenants.id, id)).returning()
  return row
}

/**
 * A statement suspending the tenant until the service reviews it: for the D1 batch of the send that tripped it on
 * the tenant's shard, and then once more for the directory (account/send.ts).
 */
export function suspendTenant(db: Db, id: string, reason: string, now: number) {
  return db.update(tenants).set({ status: 'suspended', suspendedReason: reason, suspendedAt: now }).where(eq(tenants.id, id))
}
