/**
 * /v1/webhooks (spec 4.8): the event list and the subscriptions themselves (list, create, read, update, delete).
 * Per-subscription operations (test, health, re-enable, signing secret, delivery log, replay) are in
 * webhook-operations.ts and mounted here, behind the same `webhooks_enabled` switch.
 */
import { createRoute } from '@hono/zod-openapi'
import { createMiddleware } from 'hono/factory'
import {
  CreateWebhookBody,
  EventList,
  UpdateWebhookBody,
  WebhookAnswer,
  WebhookCreated,
  WebhookDeleted,
  WebhookIdParam,
  WebhookList,
} from '../../schema/api/webhooks'
import { IdempotencyKeyHeader } from '../../schema/api/common'
import { EVENT_DESCRIPTIONS, EVENT_TYPES, EXTENSION_EVENT_TYPES, type EventType } from '../../schema/events'
import { urlPolicy } from '../config'
import { deleteDeliveriesOf } from '../db/webhook-deliveries'
import { reenableHealth, resetHealth } from '../db/webhook-health'
import { deleteWebhook, insertWebhookWithinCap, isDuplicateName, listWebhooks, updateWebhook, type WebhookPatch } from '../db/webhooks'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { newId } from '../lib/ids'
import { checkPublicUrl } from '../../common/public-url'
import { isOwnerGrant } from '../safety/grant'
import { resourceApp } from '../validate'
import { sealSigningSecret } from '../webhooks/secret'
import { newSigningSecret } from '../webhooks/signing'
import { defaultName, findWebhook, MAX_WEBHOOKS_PER_TENANT, resolveWebhook } from '../webhooks/subscriptions'
import { toWireWebhook } from '../webhooks/view'
import { webhookOperationsRoutes } from './webhook-operations'
import { errors } from './webhook-responses'

const described = (types: readonly EventType[]) => Object.fromEntries(types.map((t) => [t, EVENT_DESCRIPTIONS[t]]))
/** The standard nine with their descriptions, the extensions beside them with theirs, so `descriptions` keys `events`. */
const EVENT_LIST = {
  success: true as const,
  events: [...EVENT_TYPES],
  descriptions: described(EVENT_TYPES),
  extension_events: [...EXTENSION_EVENT_TYPES],
  extension_descriptions: described(EXTENSION_EVENT_TYPES),
}

export const webhooksRoutes = resourceApp()

/** Spec 4.8: a tenant with webhooks switched off gets 403 from every webhook endpoint. */
const webhooksEnabled = createMiddleware<AppEnv>(async function webhooksEnabled(c, next) {
  if (!c.get('tenant').webhooksEnabled) throw new ApiError(403, 'webhooks_not_enabled', 'Webhooks are not enabled for this account')
  await next()
})
webhooksRoutes.use('*', webhooksEnabled)

function checkUrl(url: string, env: Env, requestUrl: string): string {
  const check = checkPublicUrl(url, urlPolicy(env, requestUrl))
  if (!check.ok) throw new ApiError(400, 'invalid_webhook_url', `url is not allowed: ${check.reason}`)
  // Stored as given (health is keyed by it and the list shows it back unchanged).
  return url
}

webhooksRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/events',
    operationId: 'list_webhook_events',
    tags: ['Webhooks'],
    summary: 'List webhook events',
    description: [
      `Lists the ${EVENT_TYPES.length} event names a webhook can subscribe to, and any extension events, each with what it means; create_webhook and update_webhook take these names.`,
      'The nine standard event names in `events`, each with one line in `descriptions`; the extension events (`message.approval_required`, `message.reaction`, `account.at_risk`) in `extension_events`, each with one line in `extension_descriptions`. Payload shapes are in docs/webhooks.md.',
    ].join('\n\n'),
    responses: { 200: { description: 'The events', content: { 'application/json': { schema: EventList } } }, ...errors([401, 403]) },
  }),
  (c) => c.json(EVENT_LIST, 200)
)

webhooksRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/',
    operationId: 'list_webhooks',
    tags: ['Webhooks'],
    summary: 'List webhooks',
    description: [
      'Lists the webhook subscriptions in creation order: id (the position, which shifts after a deletion), name, URL, events, on/off, retries and whether signing is on. Signing secrets are never listed.',
      '`id` is the position in this list and shifts when an earlier subscription is deleted, so address subscriptions by name.',
    ].join('\n\n'),
    responses: { 200: { description: 'The subscriptions', content: { 'application/json': { schema: WebhookList } } }, ...errors([401, 403]) },
  }),
  async (c) => {
    const rows = await listWebhooks(c.var.db, c.get('tenant').id)
    return c.json({ success: true as const, webhooks: rows.map(toWireWebhook) }, 200)
  }
)

webhooksRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/',
    operationId: 'create_webhook',
    tags: ['Webhooks'],
    summary: 'Create a webhook',
    description: [
      `Subscribes a public https URL to events from list_webhook_events (at most ${MAX_WEBHOOKS_PER_TENANT} subscriptions, unique names; give a name to address it by). With generate_signing_secret true the secret is in this answer, and afterwards only get_webhook_signing_secret returns it.`,
      [
        'Each subscribed event is POSTed as JSON to `url` (a public https URL; private, loopback and link-local addresses and this service’s own hosts are refused).',
        'With `generate_signing_secret` the answer carries `signing_secret` once; deliveries are then signed (`X-Webhook-Signature: v1=<hex HMAC-SHA256(secret, timestamp + "." + raw body)>`).',
        `The name defaults to a timestamped one and must be unique; at most ${MAX_WEBHOOKS_PER_TENANT} subscriptions per tenant, over all its accounts (409 beyond).`,
        'Needs the owner’s key (full, every account, no approval, no expiry), as does every change to a subscription: its deliveries carry every account’s events and, for `message.approval_required`, the links that approve held messages.',
      ].join(' '),
    ].join('\n\n'),
    request: { headers: IdempotencyKeyHeader, body: { required: true, content: { 'application/json': { schema: CreateWebhookBody } } } },
    responses: { 201: { description: 'Created', content: { 'application/json': { schema: WebhookCreated } } }, ...errors([400, 401, 403, 409, 422]) },
  }),
  async (c) => {
    const body = c.req.valid('json')
    const tenant = c.get('tenant')
    const db = c.var.db
    const url = checkUrl(body.url, c.env, c.req.url)
    const now = Date.now()
    const secret = body.generate_signing_secret ? newSigningSecret() : null
    const id = newId('wh')
    const sealed = secret ? await sealSigningSecret(c.env, tenant.id, id, secret) : null
    let added = false
    // A default name taken by a concurrent create in the same second is recomputed; a chosen name is not.
    for (let tries = 0; ; tries++) {
      const taken = new Set((await listWebhooks(db, tenant.id)).map((w) => w.name))
      if (body.name !== undefined && taken.has(body.name)) throw new ApiError(409, 'webhook_name_taken', `A subscription named '${body.name}' already exists`)
      const name = body.name ?? defaultName(now, taken)
      try {
        added = await insertWebhookWithinCap(
          db,
          {
            id,
            tenantId: tenant.id,
            name,
            url,
            subscribedTo: JSON.stringify(body.subscribed_to),
            enabled: body.enabled,
            retriesEnabled: body.retries_enabled,
            signingSecret: sealed,
            signingSecretCreatedAt: secret ? now : null,
            // Only the owner's key reaches this route (worker/safety/scopes.ts); said here, not assumed, for the row.
            ownerConfigured: isOwnerGrant(c.get('key')),
            createdAt: now,
            updatedAt: now,
          },
          MAX_WEBHOOKS_PER_TENANT
        )
        break
      } catch (err) {
        if (!isDuplicateName(err)) throw err
        if (body.name !== undefined || tries >= 4) throw new ApiError(409, 'webhook_name_taken', `A subscription named '${name}' already exists`)
      }
    }
    if (!added) throw new ApiError(409, 'webhook_limit', `At most ${MAX_WEBHOOKS_PER_TENANT} webhook subscriptions per tenant; delete one first`)
    const all = await listWebhooks(db, tenant.id)
    const position = all.findIndex((w) => w.id === id)
    return c.json({ success: true as const, webhook: toWireWebhook(all[position]!, position), signing_secret: secret }, 201)
  }
)

webhooksRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/{webhookId}',
    tags: ['Webhooks'],
    summary: 'Get one webhook subscription',
    description:
      'One subscription by its exact name or positional id (names are stable; positions shift after a deletion). The signing secret is never part of it: use GET /webhooks/{webhookId}/signing-secret.',
    request: { params: WebhookIdParam },
    responses: { 200: { description: 'The subscription', content: { 'application/json': { schema: WebhookAnswer } } }, ...errors([400, 401, 403, 404]) },
  }),
  async (c) => {
    const { row, position } = await resolveWebhook(c.var.db, c.get('tenant').id, c.req.valid('param').webhookId)
    return c.json({ success: true as const, webhook: toWireWebhook(row, position) }, 200)
  }
)

webhooksRoutes.openapi(
  createRoute({
    method: 'put',
    path: '/{webhookId}',
    operationId: 'update_webhook',
    tags: ['Webhooks'],
    summary: 'Update a webhook',
    description: [
      'Changes the url, subscribed_to or name of a subscription (at least one of them), optionally with retries_enabled and enabled; omitted fields keep their values. A new URL resumes a paused delivery; signing is changed with the signing-secret tools.',
      'Give at least one of `url`, `subscribed_to`, `name`; `retries_enabled` and `enabled` may come along. Omitted fields keep their values. A new `url` also resumes delivery if that URL was paused. Signing is managed under /signing-secret. Needs the owner’s key; saving a subscription with it also confirms its destination for `message.approval_required` (one created before that rule receives approval links only once the owner saved it; docs/agent-safety.md).',
    ].join('\n\n'),
    request: { params: WebhookIdParam, body: { required: true, content: { 'application/json': { schema: UpdateWebhookBody } } } },
    responses: {
      200: { description: 'The updated subscription', content: { 'application/json': { schema: WebhookAnswer } } },
      ...errors([400, 401, 403, 404, 409]),
    },
  }),
  async (c) => {
    const body = c.req.valid('json')
    const tenant = c.get('tenant')
    const db = c.var.db
    const { row, all } = await resolveWebhook(db, tenant.id, c.req.valid('param').webhookId)
    const now = Date.now()
    // Saving a subscription with the owner's key confirms its destination for approval links (docs/agent-safety.md).
    const patch: WebhookPatch = { ownerConfigured: isOwnerGrant(c.get('key')) }
    if (body.url !== undefined) patch.url = checkUrl(body.url, c.env, c.req.url)
    if (body.subscribed_to !== undefined) patch.subscribedTo = JSON.stringify(body.subscribed_to)
    if (body.retries_enabled !== undefined) patch.retriesEnabled = body.retries_enabled
    if (body.enabled !== undefined) patch.enabled = body.enabled
    if (body.name !== undefined && body.name !== row.name) {
      if (all.some((w) => w.name === body.name)) throw new ApiError(409, 'webhook_name_taken', `A subscription named '${body.name}' already exists`)
      patch.name = body.name
    }
    const urlChanged = patch.url !== undefined && patch.url !== row.url
    try {
      await db.batch([
        updateWebhook(db, tenant.id, row.id, patch, now),
        // Spec 3: pointing a subscription at a URL resumes delivery there.
        ...(urlChanged ? [reenableHealth(db, tenant.id, patch.url!, now)] : []),
      ])
    } catch (err) {
      if (isDuplicateName(err)) throw new ApiError(409, 'webhook_name_taken', `A subscription named '${body.name}' already exists`)
      throw err
    }
    const found = findWebhook(await listWebhooks(db, tenant.id), patch.name ?? row.name)
    if (!found) throw new ApiError(404, 'webhook_not_found', 'The subscription was deleted meanwhile')
    return c.json({ success: true as const, webhook: toWireWebhook(found.row, found.position) }, 200)
  }
)

webhooksRoutes.openapi(
  createRoute({
    method: 'delete',
    path: '/{webhookId}',
    operationId: 'delete_webhook',
    tags: ['Webhooks'],
    summary: 'Delete a webhook',
    description:
      "Deletes a subscription with its delivery log and resets its URL's health counters. Later subscriptions move up one position, so address them by name.",
    request: { params: WebhookIdParam },
    responses: { 200: { description: 'Deleted', content: { 'application/json': { schema: WebhookDeleted } } }, ...errors([400, 401, 403, 404]) },
  }),
  async (c) => {
    const tenant = c.get('tenant')
    const db = c.var.db
    const { row, position } = await resolveWebhook(db, tenant.id, c.req.valid('param').webhookId)
    await db.batch([deleteWebhook(db, tenant.id, row.id), deleteDeliveriesOf(db, tenant.id, row.id), resetHealth(db, tenant.id, row.url)])
    return c.json({ success: true as const, webhook_id: String(position), name: row.name, url: row.url }, 200)
  }
)

webhooksRoutes.route('/', webhookOperationsRoutes)
