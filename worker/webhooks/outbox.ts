/**
 * The webhook outbox of one AccountDO. The rows live in D1 (`webhook_deliveries`: the log and the retry queue in
 * one); this object's alarm (timer `webhooks`) always points at the earliest due row, so a pending retry survives
 * eviction and restarts. While events are being written and fanned out, timer `fanout` guards them against an
 * eviction. It is set by the first write of a burst and cleared once FAN_OUT_CLEAR_DELAY_MS passed without a new write,
 * so a burst costs one alarm write and one delete rather than two per commit (a stream longer than FAN_OUT_GRACE_MS
 * lets it fire once per FAN_OUT_GRACE_MS, and the alarm sets it again while writes are in hand), and an idle account
 * has no alarm at all (issue 14 §7). A run fans out the account's new events into deliveries, claims the first attempts in the
 * same batch, starts every due retry, and never blocks on a slow receiver: attempts run side by side and their
 * outcomes are group-committed. Events committed inside this object are handed over in memory (`notice`), so the
 * common path reads D1 once per fan-out (subscriptions, health and the tenant switch in one query); the alarm
 * path re-reads undispatched events from D1, so nothing depends on memory surviving.
 */
import type { BatchItem } from 'drizzle-orm/batch'
import { deliveryTimeoutMs } from '../config'
import type { Db } from '../db/client'
import { eventsByIds, markDispatched, pendingEvents, type EventCandidate, type EventOwner, type EventRow } from '../db/events'
import { getTenant } from '../db/tenants'
import { claimDue, fanOutDeliveries, finishAttempt, nextWakeAt, type AttemptFinish, type DeliveryRow } from '../db/webhook-deliveries'
import { healthByUrl } from '../db/webhook-health'
import { enabledWebhooks, webhooksByIds, type WebhookRow } from '../db/webhooks'
import { SUBSCRIBABLE_EVENTS, type EventType } from '../../schema/events'
import { runAttempt, type AttemptTarget } from './attempt'
import { GroupCommit } from '../db/group-commit'
import { subscribedTo } from './view'

/** Events fanned out per D1 batch. */
export const FAN_OUT_BATCH_EVENTS = 25
/** Due deliveries claimed per round. */
export const CLAIM_BATCH = 25
/** Rounds per run; whatever is left waits for the alarm, which is due at once. */
const MAX_ROUNDS = 20
/** An attempt holds its row this long past the delivery timeout; after that an evicted attempt is taken over. */
export const LEASE_MARGIN_MS = 30_000
/** The guard armed before an event is written, in case the object is evicted before the fan-out runs. */
export const FAN_OUT_GRACE_MS = 5_000
/**
 * How long the guard outlives the last write in hand: the next commit of a burst finds it set and writes no alarm. A
 * guard that outlives its events (the object evicted meanwhile) fires, finds nothing undispatched and is gone.
 */
export const FAN_OUT_CLEAR_DELAY_MS = 250

const PAUSED_MESSAGE = 'not sent: delivery to this URL is paused (re-enable it, then replay)'
const EXPIRED_MESSAGE = 'not sent: the MCP subscription expired (its client stopped refreshing it)'

/** The two timers of the object the outbox runs on. */
type OutboxTimer = 'webhooks' | 'fanout'

/**
 * What the outbox needs of the object it runs in: D1, its two timers and the account whose events it fans out. The
 * AccountDO's context (account/context.ts) is one; declared here so the outbox does not depend on the layer above.
 */
export type OutboxHost = {
  env: Env
  db: Db
  /** `placement`: the tenant's placement, which an MCP delivery's cursor counts in (db/cursor-maps.ts). */
  store: { timerAt(name: OutboxTimer): number | null; webhookOwner(): EventOwner | undefined; placement(): { placement: number } | undefined }
  schedule(name: OutboxTimer, at: number): Promise<void>
  unschedule(name: OutboxTimer): Promise<void>
  /** Keeps the object alive until `work` settles (the guard's deferred clear). */
  background(work: Promise<unknown>): void
}

const isEventType = (s: string): s is EventType => (SUBSCRIBABLE_EVENTS as readonly string[]).includes(s)

export class WebhookOutbox {
  private chain: Promise<unknown> = Promise.resolve()
  /** Events committed by this object and not yet fanned out. */
  private incoming: EventCandidate[] = []
  private readonly outcomes: GroupCommit<BatchItem<'sqlite'>>
  /** Writes of events (and their fan-outs and first attempts) this object has in hand. */
  private inHand = 0
  /** Something in hand failed (a fan-out, an outcome not recorded): the guard stays until the alarm re-reads D1. */
  private unsettled = false
  /** A clear of the guard is waiting for FAN_OUT_CLEAR_DELAY_MS of nothing in hand. */
  private clearing = false
  /** Holds so far: the clear waits until a whole delay passed without one. */
  private holds = 0

  constructor(private readonly c: OutboxHost) {
    this.outcomes = new GroupCommit((statements) => c.db.batch(statements))
  }

  /** Events this object just committed; the next run fans them out without reading them back. */
  notice(events: EventCandidate[]): void {
    this.incoming.push(...events)
  }

  /**
   * Before events are written: arms the `fanout` guard, so an object evicted before its fan-out still runs it from
   * the alarm. A guard already set (by an earlier write of the burst, not yet cleared) covers this write too: it is
   * due no later than this one would be, and whatever is undispatched when it fires is fanned out then. Each hold is
   * followed by one `release`.
   */
  async hold(): Promise<void> {
    this.inHand++
    this.holds++
    const at = Date.now() + FAN_OUT_GRACE_MS
    const current = this.c.store.timerAt('fanout')
    if (current === null || at < current) await this.c.schedule('fanout', at)
  }

  /**
   * The held write is done: fanned out with its first attempts recorded (`settled`), or failed somewhere. Once
   * FAN_OUT_CLEAR_DELAY_MS passed without a new hold, nothing is in hand and nothing failed, the guard is cleared;
   * retries keep their own timer (`webhooks`).
   */
  async release(settled: boolean): Promise<void> {
    this.inHand--
    if (!settled) this.unsettled = true
    if (this.inHand > 0 || this.unsettled || this.clearing) return
    this.clearing = true
    this.c.background(this.clearWhenQuiet())
  }

  /** Clears the guard once a whole FAN_OUT_CLEAR_DELAY_MS passed with no write held: a steady stream keeps it set. */
  private async clearWhenQuiet(): Promise<void> {
    for (;;) {
      const holds = this.holds
      await new Promise((resolve) => setTimeout(resolve, FAN_OUT_CLEAR_DELAY_MS))
      if (this.holds === holds) break
    }
    this.clearing = false
    if (this.inHand === 0 && !this.unsettled) await this.c.unschedule('fanout')
  }

  /**
   * After the alarm ran (it cleared every due timer, `fanout` included): writes still in hand, or a failure its run
   * did not settle, get their guard back, so an eviction right after them is still covered.
   */
  async guardInHand(): Promise<void> {
    if ((this.inHand > 0 || this.unsettled) && this.c.store.timerAt('fanout') === null) await this.c.schedule('fanout', Date.now() + FAN_OUT_GRACE_MS)
  }

  /** Arms the alarm at `at` unless it is already due earlier. */
  async wakeBy(at: number): Promise<void> {
    const current = this.c.store.timerAt('webhooks')
    if (current === null || at < current) await this.c.schedule('webhooks', at)
  }

  /**
   * Fans out new events and starts every due attempt; resolves once those attempts are recorded. `reason`
   * 'events' skips the due-row query while the alarm says nothing is due yet.
   */
  async run(reason: 'events' | 'alarm'): Promise<void> {
    const attempts: Promise<void>[] = []
    // The alarm reads everything undispatched and due from D1, so whatever failed before it is settled by it.
    if (reason === 'alarm') this.unsettled = false
    const owner = this.c.store.webhookOwner()
    let claimedDue = 0
    await this.exclusive(async () => {
      if (!owner) return
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const fanned = await this.fanOut(owner, reason === 'alarm', attempts)
        const timer = this.c.store.timerAt('webhooks')
        const claimed = reason === 'alarm' || (timer !== null && timer <= Date.now()) ? await this.startDue(owner, attempts) : 0
        claimedDue += claimed
        if (fanned < FAN_OUT_BATCH_EVENTS && claimed < CLAIM_BATCH) break
      }
    })
    await Promise.all(attempts)
    // After the attempts are recorded, so the leases they held no longer keep an alarm: only real retries do.
    if (owner && (reason === 'alarm' || claimedDue > 0)) await this.exclusive(() => this.reschedule(owner))
  }

  private exclusive(work: () => Promise<void>): Promise<void> {
    const next = this.chain.then(work)
    this.chain = next.catch(() => undefined)
    return next
  }

  private async reschedule(owner: EventOwner): Promise<void> {
    const at = await nextWakeAt(this.c.db, owner)
    if (at === null) await this.c.unschedule('webhooks')
    else await this.c.schedule('webhooks', at)
  }

  private leaseUntil(now: number): number {
    return now + deliveryTimeoutMs(this.c.env) + LEASE_MARGIN_MS
  }

  private start(target: AttemptTarget, attempts: Promise<void>[]): void {
    attempts.push(
      runAttempt(this.c.env, this.c.db, target, this.c.store.placement()?.placement ?? 0)
        .then(async (record) => {
          await this.outcomes.write(record.statements)
          if (record.nextAttemptAt !== null) await this.wakeBy(record.nextAttemptAt)
        })
        // Unrecorded, the row keeps its lease and is attempted again once it lapses (at least once).
        .catch((err: unknown) => {
          this.unsettled = true
          console.error(JSON.stringify({ msg: 'webhook attempt not recorded', delivery: target.deliveryId, error: String(err) }))
        })
    )
  }

  /**
   * New events → one delivery per matching subscription, in one D1 round trip: the fan-out statement (which also
   * claims the first attempts), the dispatched mark, and the subscriptions the attempts need.
   */
  private async fanOut(owner: EventOwner, fromStore: boolean, attempts: Promise<void>[]): Promise<number> {
    const { db } = this.c
    const events: EventCandidate[] = this.incoming.splice(0, FAN_OUT_BATCH_EVENTS)
    if (fromStore && events.length < FAN_OUT_BATCH_EVENTS) {
      const known = new Set(events.map((e) => e.id))
      for (const e of await pendingEvents(db, owner, FAN_OUT_BATCH_EVENTS - events.length)) if (!known.has(e.id)) events.push(e)
    }
    if (events.length === 0) return 0
    const now = Date.now()
    const leaseUntil = this.leaseUntil(now)
    const ids = events.map((e) => e.id)
    const [written, , subs] = await db.batch([
      fanOutDeliveries(db, ids, now, leaseUntil, PAUSED_MESSAGE),
      markDispatched(db, ids, now),
      enabledWebhooks(db, owner.tenantId),
    ])
    const claimed = written.filter((w) => w.status === 'pending')
    if (claimed.length === 0) return events.length
    // Events handed over in memory are under the `fanout` guard until their attempts are recorded; the alarm's own
    // fan-out guards its attempts' leases here (and reschedules from D1 once they are recorded).
    if (fromStore) await this.wakeBy(leaseUntil)
    const subById = new Map(subs.map((w) => [w.id, w]))
    const eventById = new Map(events.map((e) => [e.id, e]))
    for (const row of claimed) {
      const webhook = subById.get(row.webhookId)
      const event = eventById.get(row.eventId)
      if (!webhook || !event || !isEventType(event.type)) continue
      this.start(
        { deliveryId: row.id, eventAt: event.createdAt, attempt: 1, cycleStart: 0, webhook, eventId: event.id, eventType: event.type, payload: event.payload },
        attempts
      )
    }
    return events.length
  }

  /** Claims due retries (and attempts an eviction interrupted) and starts them, unless they must not be sent. */
  private async startDue(owner: EventOwner, attempts: Promise<void>[]): Promise<number> {
    const { db } = this.c
    const now = Date.now()
    const rows = await claimDue(db, owner, now, this.leaseUntil(now), CLAIM_BATCH)
    if (rows.length === 0) return 0
    const [tenant, subs, events] = await Promise.all([
      getTenant(db, owner.tenantId),
      webhooksByIds(db, owner.tenantId, [...new Set(rows.map((r) => r.webhookId))]),
      eventsByIds(db, [...new Set(rows.map((r) => r.eventId))]),
    ])
    const subById = new Map(subs.map((s) => [s.id, s]))
    const eventById = new Map(events.map((e) => [e.id, e]))
    const health = await healthByUrl(db, owner.tenantId, [...new Set(subs.map((s) => s.url))])
    const settled: ReturnType<typeof finishAttempt>[] = []
    for (const row of rows) {
      const verdict = this.verdict(row, tenant?.webhooksEnabled ?? false, subById.get(row.webhookId), eventById.get(row.eventId), health)
      if ('notSent' in verdict) settled.push(finishAttempt(db, row.id, row.attempts, verdict, now))
      else this.start(verdict, attempts)
    }
    const [first, ...rest] = settled
    if (first) await db.batch([first, ...rest])
    await this.wakeBy(this.leaseUntil(now))
    return rows.length
  }

  private verdict(
    row: DeliveryRow,
    webhooksEnabled: boolean,
    sub: WebhookRow | undefined,
    event: EventRow | undefined,
    health: Map<string, { isDisabled: boolean }>
  ): AttemptTarget | Extract<AttemptFinish, { notSent: true }> {
    if (!sub) return { status: 'skipped', notSent: true, error: 'not sent: the subscription was deleted' }
    if (!webhooksEnabled) return { status: 'skipped', notSent: true, error: 'not sent: webhooks are switched off for this account' }
    if (!sub.enabled) return { status: 'skipped', notSent: true, error: 'not sent: the subscription is switched off' }
    if (sub.expiresAt !== null && sub.expiresAt <= Date.now()) return { status: 'skipped', notSent: true, error: EXPIRED_MESSAGE }
    if (!event || !isEventType(event.type)) return { status: 'failed', notSent: true, error: 'not sent: the event is older than the 7-day retention' }
    if (!subscribedTo(sub).includes(event.type))
      return { status: 'skipped', notSent: true, error: 'not sent: the subscription no longer subscribes to this event' }
    if (health.get(sub.url)?.isDisabled) return { status: 'paused', notSent: true, error: PAUSED_MESSAGE }
    return {
      deliveryId: row.id,
      eventAt: event.createdAt,
      attempt: row.attempts,
      cycleStart: row.cycleStart,
      webhook: sub,
      eventId: event.id,
      eventType: event.type,
      payload: event.payload,
    }
  }
}
