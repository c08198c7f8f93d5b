/** Tenant queries: the service's customers, their plan, suspension state and API/webhook switches. */
import { eq } from 'drizzle-orm'
import { tenants } from '../../schema/d1'
import { newId } from '../lib/ids'
import type { Db } from './client'

export type Tenant = typeof tenants.$inferSelect

export async function createTenant(db: Db, plan: string, now: number): Promise<Tenant> {
  const [row] = await db
    .insert(tenants)
    .values({ id: newId('ten', 20), plan, createdAt: now })
    .returning()
  return row!
}

export async function getTenant(db: Db, id: string): Promise<Tenant | undefined> {
  return db.select().from(tenants).where(eq(tenants.id, id)).get()
}

export type TenantPatch = Partial<Pick<Tenant, 'plan' | 'apiEnabled' | 'webhooksEnabled' | 'messageRetentionDays'>> & { status?: 'active' }

export async function updateTenant(db: Db, id: string, patch: TenantPatch): Promise<Tenant | undefined> {
  const values: Partial<Tenant> = { ...patch }
  // Lifting a suspension is the "review" of spec part 3: it clears the reason too.
  if (patch.status === 'active') Object.assign(values, { suspendedReason: null, suspendedAt: null })
  // A new retention takes effect at the next cron run, not when the sweep would next have visited the tenant.
  if (patch.messageRetentionDays !== undefined) values.retentionCheckedAt = 0
  if (Object.keys(values).length === 0) return getTenant(db, id)
  const [row] = await db.update(tenants).set(values).where(eq(tenants.id, id)).returning()
  return row
}

/** A statement (for a D1 batch) suspending the tenant until the service reviews it. */
export function suspendTenant(db: Db, id: string, reason: string, now: number) {
  return db.update(tenants).set({ status: 'suspended', suspendedReason: reason, suspendedAt: now }).where(eq(tenants.id, id))
}
