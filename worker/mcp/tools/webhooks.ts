/**
 * Tools for webhook subscriptions (spec 4.8): events, subscriptions, health, signing, the delivery log and replay.
 * Every argument schema is the REST route's own (schema/api/webhooks.ts), so the two cannot disagree.
 * `GET /webhooks/{webhookId}` has no tool: the spec's tool list is fixed, and list_webhooks shows the same fields.
 */
import { CreateWebhookBody, DeliveriesQuery, ReplayBody, TestWebhookBody, UpdateWebhookBody, WebhookIdParam } from '../../../schema/api/webhooks'
import { EVENT_TYPES } from '../../../schema/events'
import { PAUSE_AFTER_CONSECUTIVE_FAILURES, PAUSE_MIN_FAILING_MS, RETENTION_MS } from '../../webhooks/policy'
import { REPLAY_MAX_EVENTS } from '../../webhooks/replay'
import { MAX_WEBHOOKS_PER_TENANT } from '../../webhooks/subscriptions'
import { ACTS, READS, REMOVES, toolInput, type ToolSpec } from '../../lib/tool-spec'

const byId = { path: WebhookIdParam.shape }
/** Changes gateway state only: nothing is sent to a receiver by the call itself. */
const CHANGES = { ...ACTS, openWorldHint: false }
// The limits quoted to the agent come from the rules themselves, so a description cannot drift from the behaviour.
const RETENTION_DAYS = RETENTION_MS / 86_400_000
const PAUSE_MIN_FAILING_H = PAUSE_MIN_FAILING_MS / 3_600_000

export const webhookTools: ToolSpec[] = [
  {
    name: 'list_webhook_events',
    title: 'List webhook events',
    description: `Lists the ${EVENT_TYPES.length} event names a webhook can subscribe to, each with what it means; create_webhook and update_webhook take these names.`,
    input: toolInput({}),
    method: 'GET',
    path: '/webhooks/events',
    hints: READS,
  },
  {
    name: 'list_webhooks',
    title: 'List webhooks',
    description:
      'Lists the webhook subscriptions in creation order: id (the position, which shifts after a deletion), name, URL, events, on/off, retries and whether signing is on. Signing secrets are never listed.',
    input: toolInput({}),
    method: 'GET',
    path: '/webhooks',
    hints: READS,
  },
  {
    name: 'create_webhook',
    title: 'Create a webhook',
    description: `Subscribes a public https URL to events from list_webhook_events (at most ${MAX_WEBHOOKS_PER_TENANT} subscriptions, unique names; give a name to address it by). With generate_signing_secret true the secret is in this answer, and afterwards only get_webhook_signing_secret returns it.`,
    input: toolInput({ body: CreateWebhookBody }),
    method: 'POST',
    path: '/webhooks',
    hints: CHANGES,
  },
  {
    name: 'update_webhook',
    title: 'Update a webhook',
    description:
      'Changes the url, subscribed_to or name of a subscription (at least one of them), optionally with retries_enabled and enabled; omitted fields keep their values. A new URL resumes a paused delivery; signing is changed with the signing-secret tools.',
    input: toolInput({ ...byId, body: UpdateWebhookBody }),
    method: 'PUT',
    path: '/webhooks/{webhookId}',
    hints: { ...REMOVES, openWorldHint: false },
  },
  {
    name: 'delete_webhook',
    title: 'Delete a webhook',
    description:
      "Deletes a subscription with its delivery log and resets its URL's health counters. Later subscriptions move up one position, so address them by name.",
    input: toolInput(byId),
    method: 'DELETE',
    path: '/webhooks/{webhookId}',
    // Not idempotent by id: after a deletion the same positional id names the next subscription.
    hints: { ...REMOVES, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'test_webhook',
    title: 'Send a test event',
    description:
      'POSTs one sample event (body.event, default message.delivered) to the subscription now, signed like a real delivery and even while it is off or paused. Answers HTTP 200 with delivered true or false and the failure; it is never retried or logged and never changes health.',
    input: toolInput({ ...byId, body: TestWebhookBody, bodyOptional: true }),
    method: 'POST',
    path: '/webhooks/{webhookId}/test',
    hints: ACTS,
  },
  {
    name: 'get_webhook_health',
    title: 'Get webhook health',
    description: `Reports the delivery health of the subscription's URL (shared by subscriptions to that URL; null before the first delivery): failure counts, the last failure, and whether delivery is paused. A URL pauses after ${PAUSE_AFTER_CONSECUTIVE_FAILURES} consecutive failures spanning at least ${PAUSE_MIN_FAILING_H} h, or at once on HTTP 410.`,
    input: toolInput(byId),
    method: 'GET',
    path: '/webhooks/{webhookId}/health',
    hints: READS,
  },
  {
    name: 'reenable_webhook',
    title: 'Re-enable a webhook',
    description:
      'Resumes delivery to a paused URL, resetting the paused flag and the failure counters without sending anything. Then call replay_webhook to re-send the events missed while paused.',
    input: toolInput(byId),
    method: 'POST',
    path: '/webhooks/{webhookId}/reenable',
    hints: { ...CHANGES, idempotentHint: true },
  },
  {
    name: 'get_webhook_signing_secret',
    title: 'Get the signing secret',
    description:
      "Returns the subscription's signing secret for verifying X-Webhook-Signature on the receiver, or null when signing is off; besides create_webhook and rotate_webhook_signing_secret it is the only call that reveals it. Do not show the secret in chat unless the user asks.",
    input: toolInput(byId),
    method: 'GET',
    path: '/webhooks/{webhookId}/signing-secret',
    hints: READS,
  },
  {
    name: 'rotate_webhook_signing_secret',
    title: 'Rotate the signing secret',
    description:
      'Mints a new signing secret, returned in this answer, and turns signing on. The previous secret stops being used at once, so the receiver must be given the new one.',
    input: toolInput(byId),
    method: 'POST',
    path: '/webhooks/{webhookId}/signing-secret',
    hints: { ...REMOVES, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'turn_off_webhook_signing',
    title: 'Turn off signing',
    description: 'Removes the signing secret of a subscription, so later deliveries carry no X-Webhook-Timestamp or X-Webhook-Signature headers.',
    input: toolInput(byId),
    method: 'DELETE',
    path: '/webhooks/{webhookId}/signing-secret',
    hints: { ...REMOVES, openWorldHint: false },
  },
  {
    name: 'list_webhook_deliveries',
    title: 'List webhook deliveries',
    description: `Lists a subscription's deliveries of the last ${RETENTION_DAYS} days, newest first: delivery id, event, status, attempts, the receiver's last answer and the next retry. Filter with status, page with cursor set to next_cursor; use it to find out why a receiver missed events.`,
    input: toolInput({ ...byId, query: DeliveriesQuery }),
    method: 'GET',
    path: '/webhooks/{webhookId}/deliveries',
    hints: READS,
  },
  {
    name: 'replay_webhook',
    title: 'Replay webhook events',
    description: `Re-sends the events of a window (body.since within the last ${RETENTION_DAYS} days, until default now) with their original delivery ids, by default only those not delivered (include_delivered true re-sends all), up to ${REPLAY_MAX_EVENTS} per call with next_since when more remain. Refused with HTTP 409 while the subscription is off or its URL paused: reenable_webhook first.`,
    input: toolInput({ ...byId, body: ReplayBody }),
    method: 'POST',
    path: '/webhooks/{webhookId}/replay',
    hints: ACTS,
  },
]
