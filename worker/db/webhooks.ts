/**
 * Webhook subscription queries. A tenant's list is ordered by creation time, then by insertion (rowid; a tenant
 * move copies rows in rowid order, worker/db/move-rows.ts): a subscription's position in it is the API's `id`, so
 * two created in the same millisecond keep the order they were created in, never the order of their random ids.
 * The per-tenant cap is enforced inside the insert, so it holds under races.
 * MCP `events/subscribe` subscriptions are rows here too (origin `mcp`), upserted by their derived id.
 */
import { and, asc, eq, gt, inArray, isNull, lt, or, sql, type SQL } from 'drizzle-orm'
import { webhooks } from '../../schema/d1'
import type { Db } from './client'
import { unfenced } from './fences'
import { constantRow } from './constant-row'

export type WebhookRow = typeof webhooks.$inferSelect
export type NewWebhook = typeof webhooks.$inferInsert

export async function listWebhooks(db: Db, tenantId: string): Promise<WebhookRow[]> {
  return db.select().from(webhooks).where(eq(webhooks.tenantId, tenantId)).orderBy(asc(webhooks.createdAt), sql`rowid`)
}

/** The tenant's subscriptions that count against the cap at `now`: an MCP subscription past its TTL no longer does. */
function liveCount(tenantId: string, now: number): SQL {
  return sql`(select count(*) from ${webhooks} where ${webhooks.tenantId} = ${tenantId} and (${webhooks.expiresAt} is null or ${webhooks.expiresAt} > ${now}))`
}

/** Adds a subscription unless the tenant already has `cap`; answers false when the cap refused it. */
export async function insertWebhookWithinCap(db: Db, row: NewWebhook & { createdAt: number; updatedAt: number }, cap: number): Promise<boolean> {
  const inserted = await db
    .insert(webhooks)
    .select(
      db
        .select(constantRow(webhooks, row))
        .from(sql`(select 1)`)
        .where(sql`${liveCount(row.tenantId, row.createdAt)} < ${cap}`)
    )
    .returning({ id: webhooks.id })
  return inserted.length > 0
}

export type McpSubscriptionRow = NewWebhook & { origin: 'mcp'; keyId: string; expiresAt: number; createdAt: number; updatedAt: number }

/**
 * An MCP `events/subscribe` (SEP-3415 is idempotent per subscription key, and the row id is derived from that key):
 * a new row within the cap, or a refresh of the existing one, which takes the new secret and expiry and is switched
 * back on. Answers null when the cap refused a new row, else whether this call created it.
 */
export async function upsertMcpSubscription(db: Db, row: McpSubscriptionRow, cap: number): Promise<{ created: boolean } | null> {
  const exists = sql`exists (select 1 from ${webhooks} where ${webhooks.id} = ${row.id})`
  const written = await db
    .insert(webhooks)
    .select(
      db
        .select(constantRow(webhooks, row))
        .from(sql`(select 1)`)
        .where(sql`${exists} or ${liveCount(row.tenantId, row.createdAt)} < ${cap}`)
    )
    .onConflictDoUpdate({
      target: webhooks.id,
      set: {
        signingSecret: row.signingSecret,
        signingSecretCreatedAt: row.signingSecretCreatedAt,
        expiresAt: row.expiresAt,
        enabled: true,
        updatedAt: row.updatedAt,
      },
    })
    .returning({ createdAt: webhooks.createdAt })
  const [first] = written
  return first ? { created: first.createdAt === row.createdAt } : null
}

/** MCP subscriptions that lapsed before `before` (their log and events are past use), oldest first. */
export async function lapsedMcpSubscriptions(db: Db, before: number, limit: number): Promise<WebhookRow[]> {
  return db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.origin, 'mcp'), lt(webhooks.expiresAt, before), unfenced(webhooks.tenantId)))
    .orderBy(asc(webhooks.expiresAt))
    .limit(limit)
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

/**
 * SQL: whether a subscription still takes new deliveries at `now`. An MCP subscription stops when its TTL runs out
 * (its client stopped refreshing it), when its key expires (its TTL never reaches past the key's expiry,
 * mcp/events/subscribe.ts) or when its key is revoked (which ends it: expireKeySubscriptions); SEP-3415 re-checks
 * access at delivery time. A REST subscription has none of these.
 */
export function subscriptionLive(now: number): SQL {
  return sql`(${webhooks.expiresAt} is null or ${webhooks.expiresAt} > ${now})`
}

/**
 * A revoked key's subscriptions end now (they stay listed a day, webhooks/sweeper.ts). Keys live in the directory and
 * subscriptions on the tenant's shard, so the revocation writes both (routes/keys.ts, routes/admin.ts).
 */
export async function expireKeySubscriptions(db: Db, tenantId: string, keyId: string, now: number): Promise<void> {
  await db
    .update(webhooks)
    .set({ expiresAt: now })
    .where(and(eq(webhooks.tenantId, tenantId), eq(webhooks.keyId, keyId), or(isNull(webhooks.expiresAt), gt(webhooks.expiresAt, now))))
}
