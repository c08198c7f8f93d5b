/**
 * /v1/webhooks/{webhookId}/…: test delivery, URL health and re-enable, the signing secret, and what goes beyond
 * the spec: the delivery log (7 days) and replay. Mounted under webhooks.ts, behind its `webhooks_enabled` check.
 */
import { createRoute } from '@hono/zod-openapi'
import { IdempotencyKeyHeader } from '../../schema/api/common'
import {
  DeliveriesQuery,
  DeliveryList,
  HealthAnswer,
  ReplayBody,
  ReplayResult,
  SigningSecretAnswer,
  TestWebhookBody,
  TestWebhookResult,
  WebhookIdParam,
} from '../../schema/api/webhooks'
import { deliveryTimeoutMs, urlPolicy } from '../config'
import { listAccounts } from '../db/accounts'
import { getHealth, reenableHealth } from '../db/webhook-health'
import { listDeliveries } from '../db/webhook-deliveries'
import { updateWebhook, type WebhookRow } from '../db/webhooks'
import { ApiError } from '../errors'
import { enforce } from '../lib/rate-limit'
import { randomBase62 } from '../lib/crypto'
import { isoOrNull } from '../lib/time'
import { emptyBodyIsNone, resourceApp } from '../validate'
import { decodeLogCursor, encodeLogCursor } from '../webhooks/log-cursor'
import { PAUSE_AFTER_CONSECUTIVE_FAILURES, PAUSE_MIN_FAILING_MS, RETENTION_MS } from '../webhooks/policy'
import { postWebhook } from '../webhooks/post'
import { replayWindow, REPLAY_MAX_EVENTS } from '../webhooks/replay'
import { finishReplay, REPLAYS_PER_HOUR, startReplay } from '../db/webhook-replays'
import { samplePayload } from '../webhooks/samples'
import { sealSigningSecret, unsealSecret } from '../webhooks/secret'
import { newSigningSecret } from '../webhooks/signing'
import { resolveWebhook } from '../webhooks/subscriptions'
import { toWireDelivery, toWireHealth } from '../webhooks/view'
import { errors } from './webhook-responses'

export const webhookOperationsRoutes = resourceApp()
// The test's body is optional: an empty one sent as JSON (a client that always sets the header) means "no body".
webhookOperationsRoutes.use('/:webhookId/test', emptyBodyIsNone)

// The limits quoted in the descriptions come from the rules themselves, so a description cannot drift from the behaviour.
const RETENTION_DAYS = RETENTION_MS / 86_400_000
const PAUSE_MIN_FAILING_H = PAUSE_MIN_FAILING_MS / 3_600_000

/** The default test event: spec 4.8 says "a delivery event". */
const DEFAULT_TEST_EVENT = 'message.delivered' as const

webhookOperationsRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/{webhookId}/test',
    operationId: 'test_webhook',
    tags: ['Webhooks'],
    summary: 'Send a test event',
    description: [
      'POSTs one sample event (body.event, default message.delivered) to the subscription now, signed like a real delivery and even while it is off or paused. Answers HTTP 200 with delivered true or false and the failure; it is never retried or logged and never changes health.',
      'POSTs a sample payload of the chosen event (default message.delivered) exactly as a real delivery would be sent, signed when signing is on, with `X-Webhook-Test: true`. It is sent even when the subscription is switched off or its URL is paused, is not retried, and never changes health counters. A failed test still answers 200, with `delivered: false` and the failure.',
    ].join('\n\n'),
    request: { params: WebhookIdParam, body: { required: false, content: { 'application/json': { schema: TestWebhookBody } } } },
    responses: {
      200: { description: 'The test outcome', content: { 'application/json': { schema: TestWebhookResult } } },
      ...errors([400, 401, 403, 404, 429]),
    },
  }),
  async (c) => {
    const tenant = c.get('tenant')
    await enforce(c, 'RL_WEBHOOK_TEST', tenant.id, 'Too many webhook tests; wait a minute')
    const db = c.var.db
    const { row, position } = await resolveWebhook(db, tenant.id, c.req.valid('param').webhookId)
    const event = c.req.valid('json')?.event ?? DEFAULT_TEST_EVENT
    const [account] = await listAccounts(db, tenant.id)
    const deliveryId = `dlv_test_${randomBase62(24)}`
    const outcome = await postWebhook({
      url: row.url,
      body: JSON.stringify(samplePayload(event, account, Date.now())),
      event,
      eventId: `evt_test_${randomBase62(22)}`,
      deliveryId,
      attempt: 1,
      secret: await unsealSecret(c.env, row),
      timeoutMs: deliveryTimeoutMs(c.env),
      policy: urlPolicy(c.env, c.req.url),
      test: true,
    })
    return c.json(
      {
        success: true as const,
        webhook_id: String(position),
        event,
        delivery_id: deliveryId,
        delivered: outcome.ok,
        status_code: outcome.statusCode,
        duration_ms: outcome.durationMs,
        failure_type: outcome.ok ? null : outcome.failureType,
        error_message: outcome.ok ? null : outcome.message,
      },
      200
    )
  }
)

webhookOperationsRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/{webhookId}/health',
    operationId: 'get_webhook_health',
    tags: ['Webhooks'],
    summary: 'Get webhook health',
    description: [
      `Reports the delivery health of the subscription's URL (shared by subscriptions to that URL; null before the first delivery): failure counts, the last failure, and whether delivery is paused. A URL pauses after ${PAUSE_AFTER_CONSECUTIVE_FAILURES} consecutive failures spanning at least ${PAUSE_MIN_FAILING_H} h, or at once on HTTP 410.`,
      'Health is kept per URL (shared by subscriptions pointing there) and is null until the first real delivery attempt. A URL is paused automatically when its consecutive failures reach 15 and the first of them is at least an hour old, or at once when it answers 410 Gone; while paused nothing is sent and events are logged as `paused`.',
    ].join('\n\n'),
    request: { params: WebhookIdParam },
    responses: { 200: { description: 'The health', content: { 'application/json': { schema: HealthAnswer } } }, ...errors([400, 401, 403, 404]) },
  }),
  async (c) => {
    const tenant = c.get('tenant')
    const db = c.var.db
    const { row, position } = await resolveWebhook(db, tenant.id, c.req.valid('param').webhookId)
    return c.json({ success: true as const, webhook_id: String(position), url: row.url, health: toWireHealth(await getHealth(db, tenant.id, row.url)) }, 200)
  }
)

webhookOperationsRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/{webhookId}/reenable',
    operationId: 'reenable_webhook',
    tags: ['Webhooks'],
    summary: 'Re-enable a webhook',
    description: [
      'Resumes delivery to a paused URL, resetting the paused flag and the failure counters without sending anything. Then call replay_webhook to re-send the events missed while paused.',
      'Successes and the last failure stay as history. No delivery is attempted now; events logged as `paused` meanwhile are re-sent with POST …/replay.',
    ].join('\n\n'),
    request: { params: WebhookIdParam },
    responses: {
      200: { description: 'The health after re-enabling', content: { 'application/json': { schema: HealthAnswer } } },
      ...errors([400, 401, 403, 404]),
    },
  }),
  async (c) => {
    const tenant = c.get('tenant')
    const db = c.var.db
    const { row, position } = await resolveWebhook(db, tenant.id, c.req.valid('param').webhookId)
    await reenableHealth(db, tenant.id, row.url, Date.now())
    return c.json({ success: true as const, webhook_id: String(position), url: row.url, health: toWireHealth(await getHealth(db, tenant.id, row.url)) }, 200)
  }
)

function secretAnswer(position: number, row: Pick<WebhookRow, 'signingSecretCreatedAt'>, secret: string | null) {
  return {
    success: true as const,
    webhook_id: String(position),
    signing_enabled: secret !== null,
    signing_secret: secret,
    signing_secret_created_at: secret !== null ? isoOrNull(row.signingSecretCreatedAt) : null,
  }
}

webhookOperationsRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/{webhookId}/signing-secret',
    operationId: 'get_webhook_signing_secret',
    tags: ['Webhooks'],
    summary: 'Get the signing secret',
    description: [
      "Returns the subscription's signing secret for verifying X-Webhook-Signature on the receiver, or null when signing is off; besides create_webhook and rotate_webhook_signing_secret it is the only call that reveals it. Do not show the secret in chat unless the user asks.",
      'When signing is off, `signing_enabled` is false and `signing_secret` null.',
    ].join('\n\n'),
    request: { params: WebhookIdParam },
    responses: { 200: { description: 'The secret', content: { 'application/json': { schema: SigningSecretAnswer } } }, ...errors([400, 401, 403, 404]) },
  }),
  async (c) => {
    const { row, position } = await resolveWebhook(c.var.db, c.get('tenant').id, c.req.valid('param').webhookId)
    return c.json(secretAnswer(position, row, await unsealSecret(c.env, row)), 200)
  }
)

webhookOperationsRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/{webhookId}/signing-secret',
    operationId: 'rotate_webhook_signing_secret',
    tags: ['Webhooks'],
    summary: 'Rotate the signing secret',
    description: [
      'Mints a new signing secret, returned in this answer, and turns signing on. The previous secret stops being used at once, so the receiver must be given the new one.',
      'The secret starts `whsec_`; deliveries sent after this answer are signed with the new one.',
    ].join('\n\n'),
    request: { params: WebhookIdParam },
    responses: { 200: { description: 'The new secret', content: { 'application/json': { schema: SigningSecretAnswer } } }, ...errors([400, 401, 403, 404]) },
  }),
  async (c) => {
    const tenant = c.get('tenant')
    const db = c.var.db
    const { row, position } = await resolveWebhook(db, tenant.id, c.req.valid('param').webhookId)
    const now = Date.now()
    const secret = newSigningSecret()
    await updateWebhook(db, tenant.id, row.id, { signingSecret: await sealSigningSecret(c.env, tenant.id, row.id, secret), signingSecretCreatedAt: now }, now)
    return c.json(secretAnswer(position, { signingSecretCreatedAt: now }, secret), 200)
  }
)

webhookOperationsRoutes.openapi(
  createRoute({
    method: 'delete',
    path: '/{webhookId}/signing-secret',
    operationId: 'turn_off_webhook_signing',
    tags: ['Webhooks'],
    summary: 'Turn off signing',
    description: [
      'Removes the signing secret of a subscription, so later deliveries carry no X-Webhook-Timestamp or X-Webhook-Signature headers.',
      'Idempotent.',
    ].join('\n\n'),
    request: { params: WebhookIdParam },
    responses: { 200: { description: 'Signing is off', content: { 'application/json': { schema: SigningSecretAnswer } } }, ...errors([400, 401, 403, 404]) },
  }),
  async (c) => {
    const tenant = c.get('tenant')
    const db = c.var.db
    const { row, position } = await resolveWebhook(db, tenant.id, c.req.valid('param').webhookId)
    const now = Date.now()
    await updateWebhook(db, tenant.id, row.id, { signingSecret: null, signingSecretCreatedAt: null }, now)
    return c.json(secretAnswer(position, row, null), 200)
  }
)

webhookOperationsRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/{webhookId}/deliveries',
    operationId: 'list_webhook_deliveries',
    tags: ['Webhooks'],
    summary: 'List webhook deliveries',
    description: [
      `Lists a subscription's deliveries of the last ${RETENTION_DAYS} days, newest first: delivery id, event, status, attempts, the receiver's last answer and the next retry. Filter with status, page with cursor set to next_cursor; use it to find out why a receiver missed events.`,
      'One entry per event sent (or due) to this subscription, newest first, kept 7 days: the delivery id (X-Webhook-Delivery), attempts, the last answer and the next retry. Page with `cursor` = the previous `next_cursor`; filter with `status`.',
    ].join('\n\n'),
    request: { params: WebhookIdParam, query: DeliveriesQuery },
    responses: { 200: { description: 'A page of the log', content: { 'application/json': { schema: DeliveryList } } }, ...errors([400, 401, 403, 404]) },
  }),
  async (c) => {
    const tenant = c.get('tenant')
    const db = c.var.db
    const { row, position } = await resolveWebhook(db, tenant.id, c.req.valid('param').webhookId)
    const q = c.req.valid('query')
    const before = q.cursor === undefined ? undefined : decodeLogCursor(q.cursor)
    if (before === null) throw new ApiError(400, 'invalid_cursor', 'cursor is not a next_cursor of this log')
    const { rows, more } = await listDeliveries(db, {
      tenantId: tenant.id,
      webhookId: row.id,
      since: Date.now() - RETENTION_MS,
      before,
      status: q.status,
      limit: q.limit,
    })
    const last = rows.at(-1)
    return c.json(
      { success: true as const, webhook_id: String(position), deliveries: rows.map(toWireDelivery), next_cursor: more && last ? encodeLogCursor(last) : null },
      200
    )
  }
)

webhookOperationsRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/{webhookId}/replay',
    operationId: 'replay_webhook',
    tags: ['Webhooks'],
    summary: 'Replay webhook events',
    description: [
      `Re-sends the events of a window (body.since within the last ${RETENTION_DAYS} days, until default now) with their original delivery ids, by default only those not delivered (include_delivered true re-sends all), up to ${REPLAY_MAX_EVENTS} per call with next_since when more remain. Refused with HTTP 409 while the subscription is off or its URL paused: reenable_webhook first.`,
      `Queues every event of [since, until) that this subscription subscribes to and that was not delivered to it (or every one with include_delivered), with its original delivery id, for sending now; retries follow the subscription's setting. This is how you recover after a pause or an outage: re-enable, then replay. The window must start within the last 7 days; one call takes up to ${REPLAY_MAX_EVENTS} events and answers next_since when more remain. One replay runs at a time per subscription, at most ${REPLAYS_PER_HOUR} an hour (429 with Retry-After). Refused with 409 while the subscription is switched off or its URL is paused.`,
    ].join('\n\n'),
    request: { headers: IdempotencyKeyHeader, params: WebhookIdParam, body: { required: true, content: { 'application/json': { schema: ReplayBody } } } },
    responses: { 200: { description: 'Queued', content: { 'application/json': { schema: ReplayResult } } }, ...errors([400, 401, 403, 404, 409, 422, 429]) },
  }),
  async (c) => {
    const tenant = c.get('tenant')
    const db = c.var.db
    const { row, position } = await resolveWebhook(db, tenant.id, c.req.valid('param').webhookId)
    const body = c.req.valid('json')
    const now = Date.now()
    const since = Date.parse(body.since)
    const until = body.until === undefined ? now : Date.parse(body.until)
    if (since < now - RETENTION_MS) throw new ApiError(400, 'invalid_since', 'since must be within the last 7 days (events are kept 7 days)')
    if (until <= since) throw new ApiError(400, 'invalid_until', 'until must be later than since')
    if (!row.enabled) throw new ApiError(409, 'webhook_disabled', 'The subscription is switched off; turn it on (PUT enabled: true) before replaying')
    if ((await getHealth(db, tenant.id, row.url))?.isDisabled) {
      throw new ApiError(409, 'webhook_paused', 'Delivery to this URL is paused; re-enable it (POST …/reenable) before replaying')
    }
    const started = await startReplay(db, row.id, now)
    if (!started.ok) {
      throw new ApiError(
        429,
        'rate_limited',
        started.reason === 'in_flight'
          ? 'A replay of this subscription is already running; wait for it to finish'
          : `This subscription was replayed ${REPLAYS_PER_HOUR} times in the last hour; wait before replaying again`,
        started.retryAfterS
      )
    }
    const { queued, alreadyDelivered, inFlight, nextSince } = await replayWindow(
      c.env,
      db,
      row,
      { since, until, includeDelivered: body.include_delivered },
      now
    ).finally(() => finishReplay(db, started.id, Date.now()))
    return c.json(
      {
        success: true as const,
        webhook_id: String(position),
        queued,
        already_delivered: alreadyDelivered,
        in_flight: inFlight,
        next_since: isoOrNull(nextSince),
      },
      200
    )
  }
)
