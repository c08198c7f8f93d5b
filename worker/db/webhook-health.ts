/**
 * Per-URL delivery health (spec 2, `WebhookHealthStatus`). Several AccountDOs deliver to one URL at once, so each
 * outcome is a single upsert whose arithmetic runs in SQL, and the auto-pause rule is decided in that same
 * statement: paused at the failure that makes the run `pause.afterConsecutiveFailures` long when the run began at
 * least `pause.minFailingMs` earlier (the policy's numbers), or at once on 410 Gone.
 */
import { and, eq, inArray, sql } from 'drizzle-orm'
import type { FailureType } from '../../schema/api/webhooks'
import { webhookHealth } from '../../schema/d1'
import type { Db } from './client'

export type HealthRow = typeof webhookHealth.$inferSelect

export async function getHealth(db: Db, tenantId: string, url: string): Promise<HealthRow | undefined> {
  return db
    .select()
    .from(webhookHealth)
    .where(and(eq(webhookHealth.tenantId, tenantId), eq(webhookHealth.url, url)))
    .get()
}

export async function healthByUrl(db: Db, tenantId: string, urls: string[]): Promise<Map<string, HealthRow>> {
  if (urls.length === 0) return new Map()
  const rows = await db
    .select()
    .from(webhookHealth)
    .where(and(eq(webhookHealth.tenantId, tenantId), inArray(webhookHealth.url, urls)))
  return new Map(rows.map((r) => [r.url, r]))
}

export function recordSuccess(db: Db, tenantId: string, url: string, now: number) {
  return db
    .insert(webhookHealth)
    .values({ tenantId, url, totalSuccesses: 1, lastSuccessAt: now, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({
      target: [webhookHealth.tenantId, webhookHealth.url],
      set: {
        consecutiveFailures: 0,
        failingSince: null,
        totalSuccesses: sql`${webhookHealth.totalSuccesses} + 1`,
        lastSuccessAt: now,
        updatedAt: now,
      },
    })
}

/** `pause`: the policy's rule (webhooks/policy.ts), applied inside the update so concurrent failures count right. */
export type FailureFacts = {
  statusCode: number | null
  failureType: FailureType
  message: string
  gone: boolean
  pause: { afterConsecutiveFailures: number; minFailingMs: number }
}

export const GONE_REASON = 'the receiver answered 410 Gone'

export function recordFailure(db: Db, tenantId: string, url: string, f: FailureFacts, now: number) {
  const h = webhookHealth
  // Inside DO UPDATE the table's columns are the row as it was before this failure.
  const pauses = f.gone
    ? sql`1`
    : sql`(${h.consecutiveFailures} + 1 >= ${f.pause.afterConsecutiveFailures} and coalesce(${h.failingSince}, ${now}) <= ${now - f.pause.minFailingMs})`
  const reason = f.gone
    ? sql`${GONE_REASON}`
    : sql`(${h.consecutiveFailures} + 1) || ' consecutive failed deliveries over more than an hour; last: ' || ${f.message}`
  return db
    .insert(h)
    .values({
      tenantId,
      url,
      consecutiveFailures: 1,
      totalFailures: 1,
      failingSince: now,
      isDisabled: f.gone,
      disabledAt: f.gone ? now : null,
      disabledReason: f.gone ? GONE_REASON : null,
      lastFailureAt: now,
      lastFailureStatus: f.statusCode,
      lastFailureType: f.failureType,
      lastFailureMessage: f.message,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoUpdate({
      target: [h.tenantId, h.url],
      set: {
        consecutiveFailures: sql`${h.consecutiveFailures} + 1`,
        totalFailures: sql`${h.totalFailures} + 1`,
        failingSince: sql`case when ${h.consecutiveFailures} = 0 then ${now} else coalesce(${h.failingSince}, ${now}) end`,
        isDisabled: sql`case when ${h.isDisabled} then 1 when ${pauses} then 1 else 0 end`,
        disabledAt: sql`case when ${h.isDisabled} then ${h.disabledAt} when ${pauses} then ${now} else null end`,
        disabledReason: sql`case when ${h.isDisabled} then ${h.disabledReason} when ${pauses} then ${reason} else null end`,
        lastFailureAt: now,
        lastFailureStatus: f.statusCode,
        lastFailureType: f.failureType,
        lastFailureMessage: f.message,
        updatedAt: now,
      },
    })
}

/** Re-enable (spec 3): the paused flag and the failure counters reset; successes and the last failure stay as history. */
export function reenableHealth(db: Db, tenantId: string, url: string, now: number) {
  return db
    .update(webhookHealth)
    .set({ isDisabled: false, disabledAt: null, disabledReason: null, consecutiveFailures: 0, totalFailures: 0, failingSince: null, updatedAt: now })
    .where(and(eq(webhookHealth.tenantId, tenantId), eq(webhookHealth.url, url)))
}

/** Deleting a subscription resets its URL's health (spec 3): the next attempt starts a fresh record. */
export function resetHealth(db: Db, tenantId: string, url: string) {
  return db.delete(webhookHealth).where(and(eq(webhookHealth.tenantId, tenantId), eq(webhookHealth.url, url)))
}
