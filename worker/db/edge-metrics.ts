/**
 * The D1 reads behind GET /admin/metrics, each a cheap aggregate over one shard: accounts (one row per account: a
 * small table), pending webhook deliveries (the partial index of pending rows, so the cost is the backlog itself),
 * and the per-URL delivery health rows (one per tenant and URL) that the dispatcher already keeps counting. A tenant
 * in the middle of a move counts on the shard it lives on only (db/fences.ts `livesHere`).
 */
import { and, count, eq, lt, sql } from 'drizzle-orm'
import { accounts, webhookDeliveries, webhookHealth } from '../../schema/d1'
import type { Db } from './client'
import { livesHere } from './fences'

export type AccountSample = { tenantId: string; id: string; channel: string; status: string }
export type WebhookFigures = { pending: number; overdue: number; failures: number; successes: number; failingUrls: number; pausedUrls: number }

export function allAccounts(db: Db): Promise<AccountSample[]> {
  return db
    .select({ tenantId: accounts.tenantId, id: accounts.id, channel: accounts.channel, status: accounts.status })
    .from(accounts)
    .where(livesHere(accounts.tenantId))
}

export async function webhookFigures(db: Db, now: number): Promise<WebhookFigures> {
  const pending = and(eq(webhookDeliveries.status, 'pending'), livesHere(webhookDeliveries.tenantId))
  const [backlog, late, health] = await db.batch([
    db.select({ n: count() }).from(webhookDeliveries).where(pending),
    db
      .select({ n: count() })
      .from(webhookDeliveries)
      .where(and(pending, lt(webhookDeliveries.nextAttemptAt, now))),
    db
      .select({
        failures: sql<number>`coalesce(sum(${webhookHealth.totalFailures}), 0)`,
        successes: sql<number>`coalesce(sum(${webhookHealth.totalSuccesses}), 0)`,
        failing: sql<number>`coalesce(sum(${webhookHealth.consecutiveFailures} > 0), 0)`,
        paused: sql<number>`coalesce(sum(${webhookHealth.isDisabled}), 0)`,
      })
      .from(webhookHealth)
      .where(livesHere(webhookHealth.tenantId)),
  ])
  const h = health[0]
  return {
    pending: backlog[0]?.n ?? 0,
    overdue: late[0]?.n ?? 0,
    failures: Number(h?.failures ?? 0),
    successes: Number(h?.successes ?? 0),
    failingUrls: Number(h?.failing ?? 0),
    pausedUrls: Number(h?.paused ?? 0),
  }
}
