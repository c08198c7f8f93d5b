/**
 * What the AccountDO needs of a channel: how its messages leave, whether new contacts warm up, how its inbound media
 * is fetched. Declared here, below the channel folders that implement it (channels/contract.ts builds the whole
 * `Channel` on it), and handed in by worker/index.ts from the registry.
 */
import type { Db } from '../db/client'
import type { MessageWithContact } from '../db/messages'
import type { AccountContext } from './context'
import type { AccountRef } from './storage'

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
