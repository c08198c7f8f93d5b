/**
 * What the AccountDO hands its procedures (send, ingest, delivery, waits): storage, D1, timers, background work, and
 * the channels, of which it needs only their runtime (how messages leave, the warm-up, inbound media headers): that is
 * declared here, below the channel folders that implement it (channels/contract.ts builds the whole `Channel` on it).
 */
import type { BatchItem, BatchResponse } from 'drizzle-orm/batch'
import type { Db } from '../db/client'
import type { GroupCommit } from '../db/group-commit'
import type { MessageWithContact } from '../db/messages'
import type { ErrorCode } from '../lib/error-codes'
import type { SessionSignal } from './session/state'
import type { AccountRef, AccountStore, TimerName } from './storage'
import type { CommittedInbound, WaitRoom } from './waits'

export type AccountContext = {
  env: Env
  /** The registered channels (worker/channels/registry.ts, handed in by worker/index.ts). */
  channels: ChannelLookup
  db: Db
  store: AccountStore
  waits: WaitRoom<CommittedInbound>
  /** Wakes callers waiting for the alpha/beta session to change (the pairing-code wait of a connect call). */
  sessionSignal: SessionSignal
  /** Sets a named timer; the object's single alarm always points at the earliest one. */
  schedule(name: TimerName, at: number): Promise<void>
  unschedule(name: TimerName): Promise<void>
  /** Keeps the object alive until `work` settles (the response has already gone out). */
  background(work: Promise<unknown>): void
  /** Resolves `ms` from now: an in-memory timer, gone if the object is evicted (tests hand in one they control). */
  later(ms: number): Promise<void>
  /**
   * Runs one atomic D1 batch. When it inserts events (db/events.ts), webhook fan-out is armed before the write
   * and started right after it, so every event written here reaches its subscriptions. Use it for every batch.
   */
  commit<U extends BatchItem<'sqlite'>, T extends Readonly<[U, ...U[]]>>(statements: T): Promise<BatchResponse<T>>
  /** `commit` for statements compiled once and bound per call (db/compiled.ts): one raw D1 batch, raw results. */
  commitBound(statements: readonly D1PreparedStatement[]): Promise<D1Result[]>
  /** Inbound messages' group commit (through `commitBound`): concurrent messages of the account share one D1 batch. */
  inbound: GroupCommit<D1PreparedStatement, D1Result>
}

/**
 * One delivery attempt's outcome. The AccountDO turns it into the message's status and event:
 * - `ok`: the upstream accepted it (`sent`);
 * - `ok: false`: refused for good (`failed`, with the upstream's code when it has one);
 * - `retry`: the upstream is unavailable for now (a phone offline, a slow-down); the delivery timer tries again at
 *   `at`, and the message fails once it has waited longer than the channel's `patience`;
 * - `pending`: handed to a relay (or waiting for one); the outcome arrives later as a frame.
 */
export type DeliveryResult =
  | { ok: true; upstreamId?: string }
  | { ok: false; code: number | null; error: string }
  | { retry: true; at: number; error: string }
  | { pending: true }

/** The person an action is for, as the channel addresses them (a contact row's addresses). */
export type ActionContact = { id: string; phone: string | null; peerId: string | null; socialId: string | null; externalId: string | null }

/**
 * A chat action as a channel carries it out (issue 25), already checked by the route (the message is the account's,
 * the key may act on it) and counted by the object's per-account limits (account/actions.ts): a reaction to a
 * message by its upstream id (`emoji` null takes the account's back; the custom channel's bridge also gets our id, and a
 * message it pushed without a messageSid has none upstream), typing to a person, read marks up to an inbound message,
 * and whether a number is on the network.
 */
export type ChannelAction =
  | { kind: 'react'; contact: ActionContact; target: { messageId: string; upstreamId: string | null; fromMe: boolean }; emoji: string | null }
  | { kind: 'typing'; contact: ActionContact }
  | { kind: 'read'; contact: ActionContact; target: { messageId: string; upstreamId: string | null } }
  | { kind: 'lookup'; phone: string }

/**
 * What an action came to: done (a lookup's answer, `onNetwork` null when the channel cannot tell and `reason` says
 * why), or refused with the error the route answers (`unsupported_on_channel`, `account_not_connected`,
 * `relay_unavailable`, `rate_limited`, `action_refused`, …).
 */
export type ActionResult =
  | { ok: true; onNetwork?: boolean | null; reason?: string | null }
  | { ok: false; status: 409 | 422 | 429 | 502 | 503; code: ErrorCode; message: string; retryAfterS?: number }

/**
 * A direct channel sends by itself, from inside this object: `deliver` (the channel's outbound.ts) makes one attempt,
 * and an attempt the object did not finish (evicted mid-call) is tried again up to MAX_DELIVERY_ATTEMPTS times.
 */
export type DirectTransport = {
  readonly transport: 'direct'
  /** Delivers one queued message (see DeliveryResult). */
  deliver(c: AccountContext, ref: AccountRef, row: MessageWithContact): Promise<DeliveryResult>
  /**
   * How long a queued message may wait for the channel (a `retry` to go through) before it fails, and the error it
   * then fails with (the last `retry` error is added to it). Absent: a `retry` is never given up on by time.
   */
  readonly patience?: { ms: number; error: string }
  /** Carries out a chat action (issue 25) the channel supports (its `actions` table); absent: none. */
  act?(c: AccountContext, ref: AccountRef, action: ChannelAction): Promise<ActionResult>
}

/**
 * A relay-run channel (alpha, beta): the account's session (session/) hands each message to the relay running it,
 * re-offers it at every sweep, and fails it with `relay_unavailable` when no relay took it in time (RELAY_PATIENCE).
 */
export type RelayTransport = { readonly transport: 'relay' }

export type ChannelRuntime = (DirectTransport | RelayTransport) & {
  /** Whether new contacts follow the alpha warm-up ramp (spec 8); `ramp_day` is null otherwise. */
  readonly warmUp: boolean
  /**
   * Headers an inbound attachment's provider URL needs (Twilio's Basic auth for its media), read when the fetch
   * happens so no secret waits in the queue; sent to that URL's origin only. Absent: the URL needs none.
   */
  mediaHeaders?(env: Env, db: Db, ref: AccountRef, url: string): Promise<Record<string, string> | null>
}

/** Finds a channel by id (the AccountDO gets this from the registry through worker/index.ts). */
export type ChannelLookup = (id: AccountRef['channel']) => ChannelRuntime
