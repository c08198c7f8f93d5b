/**
 * `events/subscribe` and `events/unsubscribe` (SEP-3415 webhook delivery). A subscription is a webhook subscription
 * like any other (origin `mcp`), so it rides the durable outbox: retries, auto-pause, the delivery log and replay,
 * and it is listed by GET /v1/webhooks. Its identity is (key, callback URL, event, arguments): the row id, and the
 * `sub_` id returned, are derived from it, so subscribing again is a refresh (new secret, new expiry, switched back
 * on). A new URL of a key is verified first (verify-endpoint.ts); the granted TTL ends deliveries unless refreshed.
 */
import { checkPublicUrl } from '../../../common/public-url'
import { deliveryTimeoutMs, urlPolicy } from '../../config'
import type { Db } from '../../db/client'
import { filterText } from '../../db/event-filter'
import { deliveryWatermark, readFeed } from '../../db/event-feed'
import { deleteDeliveriesOf } from '../../db/webhook-deliveries'
import { getHealth, reenableHealth, type HealthRow } from '../../db/webhook-health'
import { deleteWebhook, listWebhooks, upsertMcpSubscription, type WebhookRow } from '../../db/webhooks'
import type { Tenant } from '../../db/tenants'
import { derivedId } from '../../lib/ids'
import { isoOrNull, iso } from '../../lib/time'
import { isOwnerGrant, type KeyGrant } from '../../safety/grant'
import { requeueEvents } from '../../webhooks/replay'
import { sealSigningSecret } from '../../webhooks/secret'
import { SIGNING_SECRET_PREFIX } from '../../webhooks/signing'
import { base64Bytes } from '../../webhooks/standard'
import { MAX_WEBHOOKS_PER_TENANT, mcpSubscriptionId } from '../../webhooks/subscriptions'
import { verifyEndpoint } from '../../webhooks/verify-endpoint'
import type { EventSubscription } from './access'
import { eventCursor, eventSeq, type FeedContext } from './feed'
import { callbackFailed, exhausted, forbidden, invalidParams, subscriptionNotFound } from './errors'
import type { SubscribeParams, UnsubscribeParams } from './shapes'

/** Granted when the client suggests nothing. */
export const DEFAULT_TTL_MS = 3_600_000
/** The longest grant, also for `ttlMs: null` (no expiry is not granted: SEP-3415 lets a server answer finite). */
export const MAX_TTL_MS = 86_400_000
/** Shorter suggestions are clamped up to this; the per-key rate limits bound how often a client can refresh. */
export const MIN_TTL_MS = 1_000
/** Events one resumed subscription catches up on from its cursor; beyond that the answer says `truncated`. */
export const CATCH_UP_MAX_EVENTS = 500
/** SEP-3415: a secret is `whsec_` + base64 of 24 to 64 random bytes. */
const SECRET_BYTES = { min: 24, max: 64 }
const MINTED_SECRET_BYTES = 32

export type SubscribeContext = { env: Env; db: Db; tenant: Tenant; grant: KeyGrant; requestUrl: string; now: number }

const feedOf = (c: SubscribeContext): FeedContext => ({ env: c.env, db: c.db, tenantId: c.tenant.id, placement: c.tenant.placement })

export type DeliveryStatus = { active: boolean; lastDeliveryAt: string | null; lastError: string | null; failedSince?: string }

export type SubscribeResult = {
  id: string
  refreshBefore: string
  cursor: string
  truncated: boolean
  deliveryStatus?: DeliveryStatus
  /** Only when the client sent no secret (issue 24's short form): the one minted for it, shown this once. */
  secret?: string
}

/** JSON with object keys sorted at every level: arguments that are equal compare equal (SEP-3415 canonical JSON). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** The row id of a subscription key; its `sub_` id (mcpSubscriptionId) is the same characters. */
function rowIdFor(c: Pick<SubscribeContext, 'tenant' | 'grant'>, url: string, sub: EventSubscription): Promise<string> {
  return derivedId('wh', ['mcp-events', c.tenant.id, c.grant.id, url, sub.type, canonicalJson(sub.arguments)])
}

function callbackUrl(c: SubscribeContext, url: string): string {
  const check = checkPublicUrl(url, urlPolicy(c.env, c.requestUrl))
  if (!check.ok) throw invalidParams(`Invalid params: delivery.url is not allowed: ${check.reason}`)
  return url
}

function mintSecret(): string {
  let s = ''
  for (const b of crypto.getRandomValues(new Uint8Array(MINTED_SECRET_BYTES))) s += String.fromCharCode(b)
  return `${SIGNING_SECRET_PREFIX}${btoa(s)}`
}

function checkedSecret(secret: string): string {
  const bytes = secret.startsWith(SIGNING_SECRET_PREFIX) ? base64Bytes(secret.slice(SIGNING_SECRET_PREFIX.length)) : null
  if (!bytes || bytes.length < SECRET_BYTES.min || bytes.length > SECRET_BYTES.max) {
    throw invalidParams(
      `Invalid params: delivery.secret must be ${SIGNING_SECRET_PREFIX} followed by base64 of ${SECRET_BYTES.min} to ${SECRET_BYTES.max} random bytes`
    )
  }
  return secret
}

/** The grant: the suggestion (or the default) within [MIN_TTL_MS, MAX_TTL_MS], and never past the key's own expiry. */
export function grantedExpiry(p: Pick<SubscribeParams, 'ttlMs' | 'ttl'>, grant: KeyGrant, now: number): number {
  const asked = p.ttlMs === null ? MAX_TTL_MS : (p.ttlMs ?? (p.ttl !== undefined ? p.ttl * 1000 : DEFAULT_TTL_MS))
  const at = now + Math.min(MAX_TTL_MS, Math.max(MIN_TTL_MS, asked))
  return grant.expiresAt === null ? at : Math.min(at, grant.expiresAt)
}

function deliveryStatusOf(h: HealthRow | undefined): DeliveryStatus {
  if (!h) return { active: true, lastDeliveryAt: null, lastError: null }
  const failing = h.consecutiveFailures > 0 && h.lastFailureType !== null
  const lastError = !failing
    ? null
    : h.lastFailureType === 'timeout'
      ? 'timeout'
      : h.lastFailureStatus === null
        ? 'connection_refused'
        : h.lastFailureStatus >= 500
          ? 'http_5xx'
          : 'http_4xx'
  return {
    active: !h.isDisabled,
    lastDeliveryAt: isoOrNull(h.lastSuccessAt),
    lastError,
    ...(failing && h.failingSince !== null ? { failedSince: iso(h.failingSince) } : {}),
  }
}

/** The callback must consent once per key and URL; a subscription of this key to it already proves that. */
async function ensureVerified(c: SubscribeContext, url: string, secret: string, rowId: string, known: WebhookRow[]): Promise<void> {
  if (known.some((w) => w.origin === 'mcp' && w.keyId === c.grant.id && w.url === url)) return
  const outcome = await verifyEndpoint(url, secret, mcpSubscriptionId(rowId), {
    policy: urlPolicy(c.env, c.requestUrl),
    timeoutMs: deliveryTimeoutMs(c.env),
    nowMs: c.now,
  })
  if (outcome.ok) return
  if (outcome.reason === 'refused') throw invalidParams(`Invalid params: delivery.url is not allowed: ${outcome.detail}`)
  const why =
    outcome.reason === 'challenge_failed'
      ? 'it answered without echoing the challenge ({"challenge": "<nonce>"} in a 2xx JSON body)'
      : `it could not be verified (${outcome.reason})`
  throw callbackFailed(outcome.reason, `The callback URL was not verified: ${why}`)
}

/** Events since the client's cursor go back into the outbox for this subscription (a new or lapsed one). */
async function catchUp(c: SubscribeContext, row: WebhookRow, sub: EventSubscription, cursor: string, maxAgeMs: number | undefined): Promise<boolean> {
  const afterSeq = await eventSeq(feedOf(c), cursor, 'Invalid params: cursor: not a cursor this server returned for events')
  const read = await readFeed(c.db, {
    tenantId: c.tenant.id,
    type: sub.type,
    afterSeq,
    filter: filterText(sub.filter),
    notBefore: maxAgeMs === undefined ? 0 : c.now - maxAgeMs,
    limit: CATCH_UP_MAX_EVENTS,
  })
  await requeueEvents(c.env, c.db, row, read.rows, false, c.now)
  const pruned = read.oldestSeq !== null && read.oldestSeq > afterSeq + 1
  return read.skippedOld || pruned || read.rows.length === CATCH_UP_MAX_EVENTS
}

export async function subscribeEvents(c: SubscribeContext, sub: EventSubscription, p: SubscribeParams): Promise<SubscribeResult> {
  if (!c.tenant.webhooksEnabled) throw forbidden('webhooks are switched off for this account; use events/poll or events/stream')
  const url = callbackUrl(c, p.delivery?.url ?? p.callback_url ?? '')
  const given = p.delivery?.secret ?? p.secret
  const secret = given === undefined ? mintSecret() : checkedSecret(given)
  const rowId = await rowIdFor(c, url, sub)
  const known = await listWebhooks(c.db, c.tenant.id)
  const existing = known.find((w) => w.id === rowId)
  if (!existing) await ensureVerified(c, url, secret, rowId, known)
  const expiresAt = grantedExpiry(p, c.grant, c.now)
  const upserted = await upsertMcpSubscription(
    c.db,
    {
      id: rowId,
      tenantId: c.tenant.id,
      name: `mcp-${mcpSubscriptionId(rowId)}`,
      url,
      subscribedTo: JSON.stringify([sub.type]),
      enabled: true,
      retriesEnabled: true,
      signingSecret: await sealSigningSecret(c.env, c.tenant.id, rowId, secret),
      signingSecretCreatedAt: c.now,
      origin: 'mcp',
      // The owner's own subscription may carry approval links (fan-out sends them only to owner-configured rows).
      ownerConfigured: isOwnerGrant(c.grant),
      filter: filterText(sub.filter),
      keyId: c.grant.id,
      expiresAt,
      createdAt: c.now,
      updatedAt: c.now,
    },
    MAX_WEBHOOKS_PER_TENANT
  )
  if (!upserted) {
    throw exhausted(
      'subscriptions',
      MAX_WEBHOOKS_PER_TENANT,
      `At most ${MAX_WEBHOOKS_PER_TENANT} webhook subscriptions per tenant (REST and MCP together); unsubscribe one first`
    )
  }
  const health = await getHealth(c.db, c.tenant.id, url)
  // A refresh is the client saying it is alive: a URL paused after repeated failures takes deliveries again.
  if (existing && health?.isDisabled) await reenableHealth(c.db, c.tenant.id, url, c.now)
  // A subscription that did not exist, or had lapsed, resumes from the client's cursor; a live one ignores it.
  const resumes = (!existing || (existing.expiresAt !== null && existing.expiresAt <= c.now)) && p.cursor !== undefined && p.cursor !== null
  const row = existing ?? (await listWebhooks(c.db, c.tenant.id)).find((w) => w.id === rowId)
  const truncated = resumes && row ? await catchUp(c, row, sub, p.cursor!, p.maxAgeMs) : false
  return {
    id: mcpSubscriptionId(rowId),
    refreshBefore: iso(expiresAt),
    cursor: eventCursor(feedOf(c), await deliveryWatermark(c.db, c.tenant.id, rowId)),
    truncated,
    ...(existing ? { deliveryStatus: deliveryStatusOf(health) } : {}),
    ...(given === undefined ? { secret } : {}),
  }
}

export async function unsubscribeEvents(c: SubscribeContext, sub: EventSubscription, p: UnsubscribeParams): Promise<Record<string, never>> {
  const rowId = await rowIdFor(c, p.delivery?.url ?? p.callback_url ?? '', sub)
  const row = (await listWebhooks(c.db, c.tenant.id)).find((w) => w.id === rowId)
  if (!row) throw subscriptionNotFound()
  await c.db.batch([deleteWebhook(c.db, c.tenant.id, row.id), deleteDeliveriesOf(c.db, c.tenant.id, row.id)])
  return {}
}
