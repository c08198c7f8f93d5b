/**
 * AccountDO: one Durable Object per connected account. A thin class of RPC methods and lifecycle hooks; the rules
 * live in sibling modules (send, ingest, delivery, wait, guards, ramp, session/) and the storage schema in storage.ts.
 * Named `${tenantId}/${accountId}` (see lib/objects.ts), so every send of an account is serialized here.
 *
 * The channels are handed in by the Worker entry (worker/index.ts subclasses this with the registry): the account
 * rules sit below the channel folders, which use them, so they must not import the registry themselves.
 *
 * Its D1 is the shard of its tenant (docs/ARCHITECTURE.md, "The data tier"): read from the directory on the first
 * call, kept in the object's storage, and changed by a move, which tells the object when it begins (sends and pushes
 * are refused with `tenant_moving`, open waits answered, timers held) and when the tenant is placed again.
 */
import { DurableObject } from 'cloudflare:workers'
import type { BatchItem, BatchResponse } from 'drizzle-orm/batch'
import type { z } from 'zod'
import type { AccountLimits, AccountRisk } from '../../schema/api/accounts'
import type { ImportedContact, InboundMessage, InboundReaction, QueuedSend, Receipt, RiskReport as RiskReportFrame, SessionState } from '../../schema/frames'
import type { Db } from '../db/client'
import { tenantPlacement } from '../db/placement'
import { directory, shardBinding, shardDb } from '../db/shards'
import { isTenantMoving, tenantMovingError } from '../errors'
import { GroupCommit } from '../db/group-commit'
import { eventOf, eventsWritten, type EventOwner } from '../db/events'
import { WebhookOutbox } from '../webhooks/outbox'
import { planOf } from '../plans'
import type { MessageWithContact } from '../db/messages'
import { act, type ActOutcome } from './actions'
import type { AccountContext, ChannelAction, ChannelLookup } from './context'
import { receiveReaction, type ReactionInput } from './reactions'
import { failQueued, recordRelayOutcome, sweepDeliveries } from './delivery'
import { countersFor } from './guards'
import { ingestMessage, type InboundInput, type IngestOutcome } from './ingest'
import { drainInboundQueue, receiveProviderInbound, type ProviderInboundOutcome } from './inbound-queue'
import type { QueuedInbound } from './inbound-queue.shared'
import {
  connectSession,
  sessionStatus,
  onRelayLost,
  onRelayState,
  removeSession,
  type ConnectInput,
  type ConnectOutcome,
  type SessionStatus,
} from './session/lifecycle'
import { claimPasskey, type PasskeyClaim } from './session/passkey'
import { SessionSignal } from './session/state'
import { applyReceipts, type ReceiptJob, type ReceiptOutcome } from './receipts'
import { onRelayContacts, onRelayInbound, onRelayReaction, sessionEntriesFor, writeSessionEntries, type SessionWriteRefusal } from './session/inbound'
import { queuedSends } from './session/outbound'
import { NEW_RAMP, rampConnected, rampDisconnected } from './ramp'
import { governingRisk, recordRisk, riskView, storedRisk, type RiskReport } from './risk'
import { allowanceFor, probeSend, sendMessage, type ProbeOutcome, type SendInput, type SendOutcome, type SendProbe } from './send'
import { AccountStore, type AccountPlacement, type AccountRef, type TimerName } from './storage'
import { totalsOf, type Totals } from './totals'
import { serveWait } from './wait'
import { WaitRoom, type CommittedInbound } from './waits'

/** A timer whose work failed runs again this much later (rather than the runtime's own alarm retries, which give up). */
export const TIMER_RETRY_MS = 10_000
/** While the tenant moves, due timers look again this much later (the move tells the object when it is over). */
export const MOVE_HOLD_MS = 10_000

export class AccountObject extends DurableObject<Env> {
  private readonly store: AccountStore
  private readonly waits = new WaitRoom<CommittedInbound>()
  private readonly sessionSignal = new SessionSignal()
  private readonly context: AccountContext
  private readonly webhooks: WebhookOutbox
  /** The running drain of the inbound media queue: the alarm and a fresh webhook join it instead of starting another. */
  private inboundDrain: Promise<void> | null = null
  /** Receipts' group commit: those that arrive together are matched in one read and moved in one D1 batch. */
  private readonly receipts = new GroupCommit<ReceiptJob, ReceiptOutcome>((jobs) => applyReceipts(this.context, jobs))
  /** Where this object last pointed its alarm (null: none); undefined until it has, so the first rearm writes. */
  private alarmAt: number | null | undefined = undefined

  constructor(ctx: DurableObjectState, env: Env, channels: ChannelLookup) {
    super(ctx, env)
    this.store = new AccountStore(ctx.storage)
    const shard = () => this.shard()
    this.context = {
      env,
      channels,
      get db(): Db {
        return shardDb(env, shard())
      },
      store: this.store,
      waits: this.waits,
      sessionSignal: this.sessionSignal,
      schedule: (name, at) => this.schedule(name, at),
      unschedule: (name) => this.unschedule(name),
      background: (work) => ctx.waitUntil(work),
      later: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      commit: (statements) => this.commit(statements),
      commitBound: (statements) => this.commitBound(statements),
      inbound: new GroupCommit((statements) => this.commitBound(statements)),
    }
    this.webhooks = new WebhookOutbox(this.context)
  }

  async send(input: SendInput): Promise<SendOutcome> {
    return this.writing(() => sendMessage(this.context, input))
  }

  /** A dry run of `send` (issue 25): the guards' verdict and today's allowances, nothing written. */
  async probeSend(probe: SendProbe): Promise<ProbeOutcome> {
    return probeSend(this.context, probe)
  }

  async ingest(input: InboundInput): Promise<IngestOutcome> {
    return this.writing(() => ingestMessage(this.context, input))
  }

  /**
   * An inbound message from a provider webhook (SMS, page inbox) whose attachments are at provider URLs: stored now
   * when it has none and nothing waits before it, else queued and its media fetched after the webhook is answered
   * (account/inbound-queue.ts).
   */
  async providerInbound(ref: AccountRef, item: QueuedInbound): Promise<ProviderInboundOutcome> {
    await this.placed()
    const outcome = await receiveProviderInbound(this.context, ref, item, Date.now())
    if (outcome.queued) this.ctx.waitUntil(this.drainInbound())
    return outcome
  }

  /** A delivery or read receipt from a direct channel's webhook (the page inbox); statuses only move forward. */
  async receipt(ref: AccountRef, receipt: z.infer<typeof Receipt>): Promise<ReceiptOutcome> {
    const [outcome] = await this.receiptsFor(ref, [receipt])
    return outcome!
  }

  /** Several receipts at once (a read watermark covering many messages), applied in order in one D1 batch. */
  async receiptsFor(ref: AccountRef, receipts: z.infer<typeof Receipt>[]): Promise<ReceiptOutcome[]> {
    this.store.setRef(ref)
    return this.writing(() => this.receipts.write(receipts.map((receipt) => ({ ref, receipt }))))
  }

  /** The account's `limits` object for GET /accounts and GET /usage; the new-contact cap is 0 while a ban-risk signal is in force. */
  async limits(ref: AccountRef, plan: string): Promise<z.infer<typeof AccountLimits>> {
    return (await this.standing(ref, plan)).limits
  }

  /** The account's `limits` and `risk` (issue 25) for GET /accounts and GET /usage, read together. */
  async standing(ref: AccountRef, plan: string): Promise<{ limits: z.infer<typeof AccountLimits>; risk: z.infer<typeof AccountRisk> }> {
    const now = Date.now()
    const p = planOf(plan)
    const counters = countersFor(this.store.counters(), now)
    const { allowance, rampDay } = allowanceFor(this.context, ref, p.newContactsPerDay, now)
    const stored = storedRisk(this.context)
    const risk = riskView(stored, now)
    return {
      limits: {
        sends_today: counters.sends,
        sends_cap: p.sendsPerDay,
        new_contacts_today: counters.newContacts,
        new_contacts_cap: governingRisk(stored, now) ? 0 : allowance,
        ramp_day: rampDay,
      },
      risk,
    }
  }

  /** A chat action (issue 25): counted against the account's own limits, then carried out by its channel. */
  async act(ref: AccountRef, action: ChannelAction, row: MessageWithContact | null): Promise<ActOutcome> {
    return act(this.context, ref, action, row)
  }

  /** A person's reaction a direct channel brought in (page inbox webhook, custom bridge push). */
  async reaction(ref: AccountRef, input: ReactionInput): Promise<string | null> {
    return receiveReaction(this.context, ref, input)
  }

  /** A ban-risk signal a provider reported (SMS carrier filtering; the page inbox's is recorded inside delivery). */
  async riskReport(ref: AccountRef, report: RiskReport): Promise<void> {
    await recordRisk(this.context, ref, report, Date.now())
  }

  /** Lifetime tallies for GET /admin/metrics: one read of this object's storage (account/totals.ts). */
  async totals(): Promise<Totals> {
    return totalsOf(this.store)
  }

  /** The channel reports the account connected or not; the warm-up ramp counts connected days. */
  async connectionChanged(ref: AccountRef, connected: boolean): Promise<void> {
    this.store.setRef(ref)
    const ramp = this.store.ramp() ?? NEW_RAMP
    this.store.setRamp(connected ? rampConnected(ramp, Date.now()) : rampDisconnected(ramp, Date.now()))
  }

  /**
   * The account was removed (channels/lifecycle.ts): a relay session is logged out upstream when a relay is
   * reachable, messages still queued fail (they can no longer go out) and its timers stop. The guard state (today's
   * counters, loop guard, opener window, ramp) is kept: the same account added again is the same sender, and
   * forgetting it would let a remove-and-re-add reset limits that cannot be switched off.
   */
  async removed(ref: AccountRef): Promise<{ reached: boolean }> {
    this.store.setRef(ref)
    await this.placed()
    const out = await removeSession(this.context)
    await failQueued(this.context, 'the account was disconnected before the message was delivered')
    const ramp = this.store.ramp()
    if (ramp) this.store.setRamp(rampDisconnected(ramp, Date.now()))
    this.store.accountRemoved()
    await this.rearm()
    return out
  }

  /**
   * Events of this account were written outside the object (a route, the admin review, a replay): fan them out.
   * Works on a removed account too: its last events (account.disconnected) still go out.
   */
  async eventsAdded(owner: EventOwner): Promise<void> {
    this.store.setWebhookOwner(owner)
    await this.placed()
    await this.webhooks.hold()
    this.ctx.waitUntil(this.webhooks.run('alarm').then(...this.released))
  }

  // ── alpha/beta session (channels/relay-run, for channels/alpha and channels/beta) ──────────────────────────────

  async connectSession(input: ConnectInput): Promise<ConnectOutcome> {
    return this.writing(() => connectSession(this.context, input))
  }

  async sessionStatus(probeTimeoutMs: number | null): Promise<SessionStatus> {
    await this.placed()
    return sessionStatus(this.context, probeTimeoutMs)
  }

  /** alpha: spends the passkey ceremony's one-time token (channels/alpha/passkey-routes.ts). */
  async claimPasskey(ceremony: string): Promise<PasskeyClaim> {
    return claimPasskey(this.context, ceremony, Date.now())
  }

  // ── frames from the relay running this account's session, routed by the RelayHubDO ───────────────────────────

  // A frame refused while the tenant moves is not acked, and the relay sends it again (worker/relay/inbox.ts).

  async relayState(ref: AccountRef, sid: string, state: SessionState, at: number): Promise<{ resend: QueuedSend[] }> {
    return this.writing(() => onRelayState(this.context, ref, sid, state, at))
  }

  /** Inbound messages of the session, in order (several when the hub group-commits a burst). */
  async relayInbound(ref: AccountRef, sid: string, messages: z.infer<typeof InboundMessage>[]): Promise<void> {
    await this.writing(() => onRelayInbound(this.context, ref, sid, messages))
  }

  async relayReceipt(ref: AccountRef, _sid: string, receipt: z.infer<typeof Receipt>): Promise<ReceiptOutcome> {
    const [outcome] = await this.writing(() => this.receipts.write([{ ref, receipt }]))
    return outcome!
  }

  async relaySent(ref: AccountRef, _sid: string, messageId: string, upstreamId: string): Promise<void> {
    await this.writing(() => recordRelayOutcome(this.context, ref, messageId, { ok: true, upstreamId }))
  }

  async relaySendFailed(ref: AccountRef, _sid: string, messageId: string, error: string, code: number | null): Promise<void> {
    await this.writing(() => recordRelayOutcome(this.context, ref, messageId, { ok: false, code, error }))
  }

  /** A person's reaction the session's driver saw (relay `reaction` frame). */
  async relayReaction(ref: AccountRef, sid: string, r: z.infer<typeof InboundReaction>): Promise<void> {
    await onRelayReaction(this.context, ref, sid, r)
  }

  /** A ban-risk signal the session's driver heard from its network (relay `risk` frame). */
  async relayRisk(ref: AccountRef, _sid: string, report: z.infer<typeof RiskReportFrame>): Promise<void> {
    await recordRisk(this.context, ref, report, Date.now())
  }

  async relayContacts(ref: AccountRef, sid: string, contacts: z.infer<typeof ImportedContact>[]): Promise<number> {
    return this.writing(() => onRelayContacts(this.context, ref, sid, contacts))
  }

  async relaySessionLoad(_ref: AccountRef, sid: string): Promise<Record<string, string>> {
    return sessionEntriesFor(this.context, sid)
  }

  /** null when stored; otherwise why not (the hub rejects the frame with it). */
  async relaySessionWrite(
    _ref: AccountRef,
    sid: string,
    fence: number,
    clear: boolean,
    changes: Record<string, string | null>
  ): Promise<SessionWriteRefusal | null> {
    return writeSessionEntries(this.context, sid, fence, clear, changes)
  }

  /** A relay took the session again (after its link came back): what is still queued goes to it. */
  async relayAttached(ref: AccountRef, _sid: string): Promise<QueuedSend[]> {
    await this.placed()
    return queuedSends(this.context, ref)
  }

  async relayLost(ref: AccountRef, sid: string): Promise<void> {
    await this.writing(() => onRelayLost(this.context, ref, sid))
  }

  // ── the tenant's shard ──────────────────────────────────────────────────────────────────────────────────────────

  /**
   * A move of the tenant tells each of its accounts' objects where the tenant is (worker/shards/move.ts): moving
   * (`movingTo` set: writes are refused, open waits answered with `closed`) and placed again, on its new shard or, a
   * move given up, its old one. A word older than what the object knows is ignored.
   */
  async placementChanged(p: AccountPlacement): Promise<void> {
    const known = this.store.placement()
    if (known && p.placement < known.placement) return
    this.store.setPlacement(p)
    if (p.movingTo !== null) this.waits.closeAll()
    else await this.rearm()
  }

  override async fetch(request: Request): Promise<Response> {
    await this.placed()
    if (new URL(request.url).pathname === '/wait') return serveWait(this.context, request, () => this.placementFor(request))
    return new Response('not found', { status: 404 })
  }

  override async alarm(): Promise<void> {
    try {
      await this.placed()
      if (this.store.moving()) {
        // Every write would meet the fence; the move tells the object when it is placed again.
        for (const name of this.store.dueTimers(Date.now())) this.store.setTimer(name, Date.now() + MOVE_HOLD_MS)
        return
      }
      // The runtime has cleared the alarm that woke us: the next rearm writes whatever it finds.
      this.alarmAt = undefined
      const due = this.store.dueTimers(Date.now())
      for (const name of due) this.store.clearTimer(name)
      // `fanout` is the guard set before events are written; its work is the webhook run's, done once for both.
      const jobs = [
        { timers: due.filter((n) => n === 'delivery'), run: () => sweepDeliveries(this.context) },
        { timers: due.filter((n) => n === 'webhooks' || n === 'fanout'), run: () => this.webhooks.run('alarm') },
        { timers: due.filter((n) => n === 'media'), run: () => this.drainInbound() },
      ]
      for (const job of jobs) {
        if (job.timers.length === 0) continue
        try {
          await job.run()
        } catch (err) {
          // The work did not happen (D1 failing): its timers come back, or the queued messages and undispatched
          // events they were for would wait for the next send (or the sweeper) however long that takes.
          for (const name of job.timers) this.store.setTimer(name, Math.min(this.store.timerAt(name) ?? Number.MAX_SAFE_INTEGER, Date.now() + TIMER_RETRY_MS))
          console.error(JSON.stringify({ msg: 'timer work failed; retrying', timers: job.timers, error: String(err) }))
        }
      }
      await this.webhooks.guardInHand()
    } finally {
      await this.rearm()
    }
  }

  private drainInbound(): Promise<void> {
    this.inboundDrain ??= drainInboundQueue(this.context, Date.now).finally(() => {
      this.inboundDrain = null
    })
    return this.inboundDrain
  }

  private commit<U extends BatchItem<'sqlite'>, T extends Readonly<[U, ...U[]]>>(statements: T): Promise<BatchResponse<T>> {
    return this.withFanOut(statements, () => this.context.db.batch(statements))
  }

  private commitBound(statements: readonly D1PreparedStatement[]): Promise<D1Result[]> {
    return this.withFanOut(statements, () => shardBinding(this.env, this.shard()).batch([...statements]))
  }

  /** The shard the object's writes and reads go to; `placed()` has run before any work that needs it. */
  private shard(): number {
    const p = this.store.placement()
    if (!p) throw new Error('the AccountDO used D1 before it knew its tenant’s shard')
    return p.shard
  }

  /** The object's tenant: its name is `${tenantId}/${accountId}` (lib/objects.ts). */
  private tenantId(): string {
    const name = this.ctx.id.name ?? ''
    const tenantId = name.includes('/') ? name.slice(0, name.indexOf('/')) : (this.store.ref()?.tenantId ?? this.store.webhookOwner()?.tenantId)
    if (!tenantId) throw new Error('the AccountDO does not know its tenant')
    return tenantId
  }

  /** Learns the tenant's shard from the directory the first time (a D1 read once per object, not per call). */
  private async placed(): Promise<void> {
    if (!this.store.placement()) await this.refreshPlacement()
  }

  private async refreshPlacement(): Promise<void> {
    const p = await tenantPlacement(directory(this.env), this.tenantId())
    if (!p) throw new Error(`tenant ${this.tenantId()} is not in the directory`)
    this.store.setPlacement(p)
  }

  /**
   * Work that writes to the tenant's shard: refused while the tenant moves. A write that met a fence all the same
   * (this object was not told: it had been evicted mid-move, or the word is late) reads the placement again, so the
   * next call goes where the tenant now lives.
   */
  private async writing<T>(work: () => Promise<T>): Promise<T> {
    await this.placed()
    if (this.store.moving()) throw tenantMovingError()
    try {
      return await work()
    } catch (err) {
      if (isTenantMoving(err)) await this.refreshPlacement().catch(() => undefined)
      throw err
    }
  }

  /** The wait's caller names the placement its cursor counts in; a caller ahead of this object makes it read again. */
  private async placementFor(request: Request): Promise<AccountPlacement> {
    const asked = Number(new URL(request.url).searchParams.get('placement') ?? 0)
    if (asked > (this.store.placement()?.placement ?? 0)) await this.refreshPlacement()
    return this.store.placement()!
  }

  /** Releases a hold of the outbox once its run is over: settled when it went through, not when it threw. */
  private readonly released = [() => this.webhooks.release(true), () => this.webhooks.release(false)] as const

  /** Runs one batch; when it inserts events, fan-out is guarded before the write and started right after it. */
  private async withFanOut<R extends readonly unknown[]>(statements: readonly unknown[], write: () => Promise<R>): Promise<R> {
    const first = statements.map(eventOf).find((e) => e !== undefined)
    if (!first) return write()
    // Guarded before the write: if the object is evicted right after it, the alarm still fans the events out.
    this.store.setWebhookOwner({ tenantId: first.tenantId, accountId: first.accountId })
    await this.webhooks.hold()
    let results: R
    try {
      results = await write()
    } catch (err) {
      // The batch may or may not have landed: the guard stays and the alarm looks.
      await this.webhooks.release(false)
      throw err
    }
    // Events whose insert found no subscription were written dispatched: nothing to fan out, no D1 round trip.
    const pending = eventsWritten(statements, results).filter((e) => e.dispatchedAt === null)
    if (pending.length > 0) {
      this.webhooks.notice(pending)
      this.ctx.waitUntil(this.webhooks.run('events').then(...this.released))
    } else await this.webhooks.release(true)
    return results
  }

  private async schedule(name: TimerName, at: number): Promise<void> {
    this.store.setTimer(name, at)
    await this.rearm()
  }

  private async unschedule(name: TimerName): Promise<void> {
    this.store.clearTimer(name)
    await this.rearm()
  }

  /** Points the alarm at the earliest timer; a storage write only when that moved (a burst's commits mostly leave it). */
  private async rearm(): Promise<void> {
    const next = this.store.nextTimerAt()
    if (next === this.alarmAt) return
    // Noted before the await: storage applies calls in the order they are made, so the last one made is what holds.
    this.alarmAt = next
    try {
      if (next === null) await this.ctx.storage.deleteAlarm()
      else await this.ctx.storage.setAlarm(next)
    } catch (err) {
      this.alarmAt = undefined
      throw err
    }
  }
}
