/**
 * The once-a-minute safety net (Cron Trigger): kicks Durable Objects whose events were never fanned out (a lost
 * notice) or whose deliveries are overdue (a lost alarm), deletes log rows and events past the 7-day
 * retention in bounded chunks, and removes MCP subscriptions a day after they lapsed (their clients stopped
 * refreshing them; an expired one neither delivers nor counts against the cap meanwhile).
 */
import type { Db } from '../db/client'
import { pruneEvents, undispatchedOwners } from '../db/events'
import { deleteDeliveriesOf, overdueOwners, pruneDeliveries } from '../db/webhook-deliveries'
import { deleteWebhook, lapsedMcpSubscriptions } from '../db/webhooks'
import { notifyOwners } from './emit'
import { RETENTION_MS } from './policy'

/** Work older than this with nobody on it is considered stranded. */
export const STRANDED_AFTER_MS = 60_000
const KICKS_PER_SWEEP = 100
const PRUNE_CHUNK = 500
const PRUNE_CHUNKS_PER_SWEEP = 10
/** A lapsed MCP subscription stays listed (with its log) this long, so its owner can see why deliveries stopped. */
export const LAPSED_KEEP_MS = 86_400_000
const LAPSED_PER_SWEEP = 50

export type SweepReport = { kicked: number; prunedDeliveries: number; prunedEvents: number; prunedSubscriptions: number }

export async function sweepWebhooks(env: Env, db: Db, now: number): Promise<SweepReport> {
  const [orphans, overdue] = await Promise.all([
    undispatchedOwners(db, now - STRANDED_AFTER_MS, KICKS_PER_SWEEP),
    overdueOwners(db, now - STRANDED_AFTER_MS, KICKS_PER_SWEEP),
  ])
  const owners = [...orphans, ...overdue]
  await notifyOwners(env, owners)
  const cutoff = now - RETENTION_MS
  let prunedDeliveries = 0
  let prunedEvents = 0
  for (let i = 0; i < PRUNE_CHUNKS_PER_SWEEP; i++) {
    const n = await pruneDeliveries(db, cutoff, PRUNE_CHUNK)
    prunedDeliveries += n
    if (n < PRUNE_CHUNK) break
  }
  for (let i = 0; i < PRUNE_CHUNKS_PER_SWEEP; i++) {
    const n = await pruneEvents(db, cutoff, PRUNE_CHUNK)
    prunedEvents += n
    if (n < PRUNE_CHUNK) break
  }
  const lapsed = await lapsedMcpSubscriptions(db, now - LAPSED_KEEP_MS, LAPSED_PER_SWEEP)
  for (const w of lapsed) await db.batch([deleteWebhook(db, w.tenantId, w.id), deleteDeliveriesOf(db, w.tenantId, w.id)])
  return { kicked: new Set(owners.map((o) => `${o.tenantId}/${o.accountId}`)).size, prunedDeliveries, prunedEvents, prunedSubscriptions: lapsed.length }
}
