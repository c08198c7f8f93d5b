/**
 * Replay (beyond the spec, after Svix's "recover"): the events of a window that one subscription subscribes to go
 * back into the outbox with their original delivery ids, due now, and the owning AccountDOs are told to run.
 * Already delivered ones are skipped unless asked for; an attempt in flight is left to finish.
 */
import { OWNER_ONLY_EVENT } from '../../schema/events'
import type { Db } from '../db/client'
import { eventsInWindow, type EventOwner, type EventRow } from '../db/events'
import { deliveriesByIds, insertDelivery, requeueDelivery } from '../db/webhook-deliveries'
import type { WebhookRow } from '../db/webhooks'
import { notifyOwners } from './emit'
import { deliveryIdFor } from './signing'
import { subscribedTo } from './view'

/** Events one replay call takes; the answer's next_since continues from there. */
export const REPLAY_MAX_EVENTS = 500
/** Statements per D1 batch. */
const BATCH_STATEMENTS = 100

export type ReplayWindow = { since: number; until: number; includeDelivered: boolean }
export type ReplayOutcome = { queued: number; alreadyDelivered: number; inFlight: number; nextSince: number | null }

export async function replayWindow(env: Env, db: Db, sub: WebhookRow, w: ReplayWindow, now: number): Promise<ReplayOutcome> {
  // Approval links are replayed only to a destination the owner configured, as fan-out sends them (docs/agent-safety.md).
  const types = subscribedTo(sub).filter((t) => sub.ownerConfigured || t !== OWNER_ONLY_EVENT)
  const fetched = await eventsInWindow(db, sub.tenantId, types, sub.filter, w.since, w.until, REPLAY_MAX_EVENTS + 1)
  const more = fetched.length > REPLAY_MAX_EVENTS
  const counts = await requeueEvents(env, db, sub, fetched.slice(0, REPLAY_MAX_EVENTS), w.includeDelivered, now)
  return { ...counts, nextSince: more ? fetched[REPLAY_MAX_EVENTS]!.createdAt : null }
}

/**
 * Puts these events of `sub` back into the outbox, due now, under their one delivery id per (event, subscription):
 * also what an MCP client's resumed subscription uses to catch up from its cursor (mcp/events/subscribe.ts).
 */
export async function requeueEvents(
  env: Env,
  db: Db,
  sub: WebhookRow,
  events: EventRow[],
  includeDelivered: boolean,
  now: number
): Promise<Omit<ReplayOutcome, 'nextSince'>> {
  const ids = events.map((e) => deliveryIdFor(e.id, sub.id))
  const existing = new Map((await deliveriesByIds(db, ids)).map((r) => [r.id, r]))
  const statements: Array<ReturnType<typeof insertDelivery> | ReturnType<typeof requeueDelivery>> = []
  const owners: EventOwner[] = []
  const outcome = { queued: 0, alreadyDelivered: 0, inFlight: 0 }
  events.forEach((event, i) => {
    const id = ids[i]!
    const row = existing.get(id)
    if (row?.status === 'delivered' && !includeDelivered) {
      outcome.alreadyDelivered++
      return
    }
    if (row?.status === 'pending' && row.leaseUntil !== null && row.leaseUntil > now) {
      outcome.inFlight++
      return
    }
    statements.push(
      row
        ? requeueDelivery(db, id, now)
        : insertDelivery(db, {
            id,
            tenantId: sub.tenantId,
            webhookId: sub.id,
            eventId: event.id,
            eventType: event.type,
            accountId: event.accountId,
            status: 'pending',
            nextAttemptAt: now,
            createdAt: event.createdAt,
            updatedAt: now,
          })
    )
    owners.push({ tenantId: event.tenantId, accountId: event.accountId })
    outcome.queued++
  })
  for (let i = 0; i < statements.length; i += BATCH_STATEMENTS) {
    const [first, ...rest] = statements.slice(i, i + BATCH_STATEMENTS)
    if (first) await db.batch([first, ...rest])
  }
  await notifyOwners(env, owners)
  return outcome
}
