/**
 * The channel contract: what every channel (custom, alpha, beta, SMS, page inbox) implements, in its own folder
 * `worker/channels/<name>/`, with the files CHANNEL_FILES names for its kind (a test checks every folder):
 * - a direct channel (custom, SMS, page inbox) talks to its provider itself: index.ts (the Channel), routes.ts
 *   (connect, status, remove and the rest of its spec section), connect.ts (checking and storing what connect is
 *   given), inbound.ts (provider payload → the AccountDO's inbound input), outbound.ts (its `deliver`, which runs
 *   inside the AccountDO) and tools.ts (its MCP tools, derived from routes.ts);
 * - a relay-run channel (alpha, beta) is run by a relay: index.ts, routes.ts, connect.ts and tools.ts, built on the
 *   shared `channels/relay-run/` (account lookup, `ensureConnecting`, starting the session, removal); its messages
 *   come and go through the account's session in the AccountDO (`account/session/`) and its driver in `relay/<name>/`
 *   (RELAY_DRIVER_FILES).
 * `registry.ts` lists the channels; the app, outbound delivery, the send path and the MCP tool table read the
 * registry, never a switch on the channel name. Adding one: docs/ARCHITECTURE.md, "How to add a channel".
 */
import type { OpenAPIHono } from '@hono/zod-openapi'
import type { ChatActionName } from '../../schema/api/actions'
import type { Hono } from 'hono'
import type { ChannelRuntime } from '../account/context'
import type { AccountRef } from '../account/storage'
import type { AccountRow } from '../db/accounts'
import type { Db } from '../db/client'
import type { AppEnv } from '../env'
import type { ErrorCode } from '../lib/error-codes'
import type { ToolRow } from '../lib/tool-spec'

/** The files of a channel folder, by its transport (docs/ARCHITECTURE.md, "How to add a channel"). */
export const CHANNEL_FILES = {
  direct: ['index.ts', 'routes.ts', 'connect.ts', 'inbound.ts', 'outbound.ts', 'tools.ts'],
  relay: ['index.ts', 'routes.ts', 'connect.ts', 'tools.ts'],
} as const satisfies Record<ChannelRuntime['transport'], readonly string[]>

/** The files of a relay-run channel's driver, `relay/<name>/`: the same layout per network (relay/alpha, relay/beta). */
export const RELAY_DRIVER_FILES = ['client.ts', 'login.ts', 'handle-events.ts', 'convert.ts', 'ids.ts', 'state.ts'] as const

export type ChannelId = AccountRef['channel']

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

/** A channel: the runtime the AccountDO uses (account/channel-runtime.ts) and what the Worker mounts and reads. */
export type Channel = ChannelRuntime & {
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
  /**
   * The channel's MCP tools (spec 4.9): which of its REST operations are tools (by operationId) and the hints MCP
   * adds; everything else comes from the route definitions (lib/tool-spec.ts `routeTools`).
   */
  readonly tools: readonly ToolRow[]
  /** The `to` member that names a new person here. */
  readonly address: AddressKind
  /** Whether a person who never wrote and is not in the account's address book may be messaged. */
  readonly strangers: { allowed: true } | { allowed: false; status: 409 | 422; code: ErrorCode; message: string }
  /**
   * Whether a restriction with this reason still lets replies out (to people who wrote to the account): alpha's 463
   * forbids new chats only, and its relay judges each recipient. New contacts stay refused with account_restricted.
   */
  repliesWhileRestricted?(reason: string | null): boolean
  /** Channel rules checked at send time (24-hour window, A2P, media the transport cannot carry); throws ApiError. */
  checkSend?(check: SendCheck): Promise<void>
  /**
   * Which chat actions the network supports (issue 25): quoted replies, reactions, typing, read marks, the on-network
   * lookup. The routes answer 422 `unsupported_on_channel` for the others; docs/api.md's table is this one (a test
   * compares them). A direct channel carries its actions out in `act`, a relay-run one through its relay session.
   */
  readonly actions: Readonly<Record<ChatActionName, boolean>>
}

/** What the send path needs of a channel to resolve a recipient and check a send. */
export type SendRules = Pick<Channel, 'title' | 'address' | 'strangers' | 'checkSend' | 'repliesWhileRestricted' | 'actions'>
