/**
 * Webhook subscription queries. A tenant's list is ordered by creation (then internal id): a subscription's
 * position in it is the API's `id`. The per-tenant cap is enforced inside the insert, so it holds under races.
 */
import { and, asc, eq, inArray, sql } from 'drizzle-orm'
import { webhooks } from '../../schema/d1'
import type { Db } from './client'

export type WebhookRow = typeof webhooks.$inferSelect
export type NewWebhook = typeof webhooks.$inferInsert

export async function listWebhooks(db: Db, tenantId: string): Promise<WebhookRow[]> {
  return db.select().from(webhooks).where(eq(webhooks.tenantId, tenantId)).orderBy(asc(webhooks.createdAt), asc(webhooks.id))
}

/** Adds a subscription unless the tenant already has `cap`; answers false when the cap refused it. */
export async function insertWebhookWithinCap(db: Db, row: NewWebhook & { createdAt: number; updatedAt: number }, cap: number): Promise<boolean> {
  const inserted = await db
    .insert(webhooks)
    .select(
      db
        .select({
          id: sql`${row.id}`.as('id'),
          tenantId: sql`${row.tenantId}`.as('tenant_id'),
          name: sql`${row.name}`.as('name'),
          url: sql`${row.url}`.as('url'),
          subscribedTo: sql`${row.subscribedTo}`.as('subscribed_to'),
          enabled: sql`${row.enabled ? 1 : 0}`.as('enabled'),
          retriesEnabled: sql`${row.retriesEnabled ? 1 : 0}`.as('retries_enabled'),
          signingSecret: sql`${row.signingSecret ?? null}`.as('signing_secret'),
          signingSecretCreatedAt: sql`${row.signingSecretCreatedAt ?? null}`.as('signing_secret_created_at'),
          ownerConfigured: sql`${row.ownerConfigured ? 1 : 0}`.as('owner_configured'),
          createdAt: sql`${row.createdAt}`.as('created_at'),
          updatedAt: sql`${row.updatedAt}`.as('updated_at'),
        })
        .from(sql`(select 1)`)
        .where(sql`(select count(*) from ${webhooks} where ${webhooks.tenantId} = ${row.tenantId}) < ${cap}`)
    )
    .returning({ id: webhooks.id })
  return inserted.length > 0
}

export type WebhookPatch = Partial<
  Pick<WebhookRow, 'name' | 'url' | 'subscribedTo' | 'enabled' | 'retriesEnabled' | 'signingSecret' | 'signingSecretCreatedAt' | 'ownerConfigured'>
>

/** A statement (for a D1 batch) changing one subscription. */
export function updateWebhook(db: Db, tenantId: string, id: string, patch: WebhookPatch, now: number) {
  return db
    .update(webhooks)
    .set({ ...patch, updatedAt: now })
    .where(and(eq(webhooks.tenantId, tenantId), eq(webhooks.id, id)))
}

export function deleteWebhook(db: Db, tenantId: string, id: string) {
  return db.delete(webhooks).where(and(eq(webhooks.tenantId, tenantId), eq(webhooks.id, id)))
}

/** Subscriptions by internal id (for retries, which outlive the list order). */
export async function webhooksByIds(db: Db, tenantId: string, ids: string[]): Promise<WebhookRow[]> {
  if (ids.length === 0) return []
  return db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.tenantId, tenantId), inArray(webhooks.id, ids)))
}

/** Whether a unique-index violation on the subscription name caused `err`. */
export function isDuplicateName(err: unknown): boolean {
  const text = err instanceof Error ? `${err.message} ${String(err.cause ?? '')}` : String(err)
  return /UNIQUE constraint failed: webhooks\.tenant_id, webhooks\.name/.test(text)
}

/** The switched-on subscriptions of a tenant (a statement, for the fan-out's batch). */
export function enabledWebhooks(db: Db, tenantId: string) {
  return db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.tenantId, tenantId), eq(webhooks.enabled, true)))
}
