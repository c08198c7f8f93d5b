/**
 * The channel contract: what every channel (custom, alpha, beta, SMS, page inbox) implements, in its own folder
 * `worker/channels/<name>/` with the same file names (index.ts exports the Channel; routes.ts, connect.ts,
 * inbound.ts, outbound.ts, tools.ts as the channel needs them). `registry.ts` lists the channels; the app, outbound
 * delivery, the send path and the MCP tool table read the registry, never a switch on the channel name.
 *
 * Adding a channel: write its folder (and `relay/<name>/` if the relay runs it), add its name to CHANNELS in
 * schema/d1.ts with a migration if it is new, and add one line to registry.ts.
 */
import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Hono } from 'hono'
import type { AccountContext } from '../account/context'
import type { AccountRef } from '../account/storage'
import type { AccountRow } from '../db/accounts'
import type { Db } from '../db/client'
import type { MessageWithContact } from '../db/messages'
import type { AppEnv } from '../env'
import type { ErrorCode } from '../lib/error-codes'
import type { ToolSpec } from '../lib/tool-spec'

export type ChannelId = AccountRef['channel']

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

/** How a person is addressed on the channel besides `to.contact_id` (spec 4.2). */
export type AddressKind = 'phone' | 'external' | 'social'

/** What a channel-specific send check sees; all reads, after the recipient is resolved and before the AccountDO's guards. */
export type SendCheck = {
  env: Env
  db: Db
  account: AccountRow
  /** The recipient: `known` false for a person the account has no contact for yet. */
  contact: { id: string; known: boolean; hasInbound: boolean; lastInboundAt: number | null }
  mediaUrl: string | null
  now: number
}

export interface Channel {
  /** The stored and wire channel name (`accounts.channel`, webhook payload `channel`). */
  readonly id: ChannelId
  /** Path segment under `/v1/channels/` (spec part 4): `alpha-web`, `beta`, `sms`, `meta`, `custom`. */
  readonly path: string
  /** The name people read (OpenAPI tag, messages): `alpha`, `SMS`, `page inbox`. */
  readonly title: string
  /** API-key routes, mounted at `/v1/channels/<path>`: connect, status, remove and the rest of spec part 4. */
  readonly routes: OpenAPIHono<AppEnv>
  /**
   * Routes that authenticate by their own signature or signed token, never by API key (provider callbacks, hosted
   * connect pages). Mounted at the root ahead of the API-key check, so they name their full paths
   * (`/connect/alpha-web`, `/v1/channels/beta/connect/page`, `/v1/channels/sms/twilio/inbound/…`).
   */
  readonly publicRoutes?: Hono<AppEnv>
  /**
   * Public routes under /v1 that cap their body themselves, above /v1's 256 KiB (the phone's MMS webhook carries its
   * files inline): /v1's limit skips paths matching this.
   */
  readonly ownBodyLimit?: RegExp
  /** The channel's MCP tools (spec 4.9), each one of its REST operations. */
  readonly tools: readonly ToolSpec[]
  /** The `to` member that names a new person here. */
  readonly address: AddressKind
  /** Whether a person who never wrote and is not in the account's address book may be messaged. */
  readonly strangers: { allowed: true } | { allowed: false; status: 409 | 422; code: ErrorCode; message: string }
  /** Whether new contacts follow the alpha warm-up ramp (spec 8); `ramp_day` is null otherwise. */
  readonly warmUp: boolean
  /**
   * `relay`: messages are handed to a relay and re-offered at every sweep until `patience` runs out. `direct`: an
   * attempt the object did not finish (evicted mid-call) is tried again up to MAX_DELIVERY_ATTEMPTS times.
   */
  readonly transport: 'direct' | 'relay'
  /**
   * How long a queued message may wait for the channel (a relay to take it, a `retry` to go through) before it
   * fails, and the error it then fails with (the last `retry` error is added to it).
   */
  readonly patience?: { ms: number; error: string }
  /**
   * Whether a restriction with this reason still lets replies out (to people who wrote to the account): alpha's 463
   * forbids new chats only, and its relay judges each recipient. New contacts stay refused with account_restricted.
   */
  repliesWhileRestricted?(reason: string | null): boolean
  /** Channel rules checked at send time (24-hour window, A2P, media the transport cannot carry); throws ApiError. */
  checkSend?(check: SendCheck): Promise<void>
  /** Delivers one queued message (see DeliveryResult). */
  deliver(c: AccountContext, ref: AccountRef, row: MessageWithContact): Promise<DeliveryResult>
  /**
   * Headers an inbound attachment's provider URL needs (Twilio's Basic auth for its media), read when the fetch
   * happens so no secret waits in the queue; sent to that URL's origin only. Absent: the URL needs none.
   */
  mediaHeaders?(env: Env, db: Db, ref: AccountRef, url: string): Promise<Record<string, string> | null>
}

/** What the AccountDO needs of a channel: how messages leave, whether new contacts warm up, how its media is fetched. */
export type ChannelRuntime = Pick<Channel, 'deliver' | 'transport' | 'patience' | 'warmUp' | 'mediaHeaders'>

/** Finds a channel by id (the AccountDO gets this from the registry through worker/index.ts). */
export type ChannelLookup = (id: ChannelId) => ChannelRuntime

/** What the send path needs of a channel to resolve a recipient and check a send. */
export type SendRules = Pick<Channel, 'title' | 'address' | 'strangers' | 'checkSend' | 'repliesWhileRestricted'>
