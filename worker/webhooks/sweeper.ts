/**
 * The once-a-minute safety net (Cron Trigger): kicks Durable Objects whose events were never fanned out (a lost
 * notice) or whose deliveries are overdue (a lost alarm), and deletes log rows and events past the 7-day
 * retention in bounded chunks.
 */
import type { Db } from '../db/client'
import { pruneEvents, undispatchedOwners } from '../db/events'
import { overdueOwners, pruneDeliveries } from '../db/webhook-deliveries'
import { notifyOwners } from './emit'
import { RETENTION_MS } from './policy'

/** Work older than this with nobody on it is considered stranded. */
export const STRANDED_AFTER_MS = 60_000
const KICKS_PER_SWEEP = 100
const PRUNE_CHUNK = 500
const PRUNE_CHUNKS_PER_SWEEP = 10

export type SweepReport = { kicked: number; prunedDeliveries: number; prunedEvents: number }

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
  return { kicked: new Set(owners.map((o) => `${o.tenantId}/${o.accountId}`)).size, prunedDeliveries, prunedEvents }
}
