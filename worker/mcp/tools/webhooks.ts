/** Tools for webhook subscriptions (spec 4.8): events, subscriptions, health, signing, deliveries and replay. */
import { CreateWebhookBody, DeliveriesQuery, ReplayWebhookBody, TestWebhookBody, UpdateWebhookBody } from '../planned-bodies'
import { ACTS, READS, REMOVES, toolInput, webhookIdArg, type ToolSpec } from '../tool'

const byId = { path: { webhookId: webhookIdArg } }
const CHANGES = { ...ACTS, openWorldHint: false }

export const webhookTools: ToolSpec[] = [
  {
    name: 'list_webhook_events',
    title: 'List webhook events',
    description: 'Lists the event names a webhook can subscribe to, with what each one means.',
    input: toolInput({}),
    method: 'GET',
    path: '/webhooks/events',
    hints: READS,
  },
  {
    name: 'list_webhooks',
    title: 'List webhooks',
    description: 'Lists the webhook subscriptions: URL, events, on/off, retries and whether signing is on (secrets are not included).',
    input: toolInput({}),
    method: 'GET',
    path: '/webhooks',
    hints: READS,
  },
  {
    name: 'create_webhook',
    title: 'Create a webhook',
    description:
      'Subscribes a public https URL to events (at least one from list_webhook_events); with generate_signing_secret true the signing secret is returned once, in this answer only.',
    input: toolInput({ body: CreateWebhookBody }),
    method: 'POST',
    path: '/webhooks',
    hints: CHANGES,
  },
  {
    name: 'update_webhook',
    title: 'Update a webhook',
    description: 'Changes the url, events, name, retries or enabled flag of a subscription; omitted fields keep their values, and a new URL resumes a paused delivery.',
    input: toolInput({ ...byId, body: UpdateWebhookBody }),
    method: 'PUT',
    path: '/webhooks/{webhookId}',
    hints: { ...REMOVES, openWorldHint: false },
  },
  {
    name: 'delete_webhook',
    title: 'Delete a webhook',
    description: "Deletes a subscription and resets its URL's health counters; address it by name, because positional ids shift after a deletion.",
    input: toolInput(byId),
    method: 'DELETE',
    path: '/webhooks/{webhookId}',
    // Not idempotent by id: after a deletion the same positional id names the next subscription.
    hints: { ...REMOVES, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'test_webhook',
    title: 'Send a test event',
    description: 'Sends one test event to a subscription now and reports whether it was delivered, with failure details; health counters are not touched.',
    input: toolInput({ ...byId, body: TestWebhookBody, bodyOptional: true }),
    method: 'POST',
    path: '/webhooks/{webhookId}/test',
    hints: ACTS,
  },
  {
    name: 'get_webhook_health',
    title: 'Get webhook health',
    description: 'Reports the delivery health of a subscription: consecutive and total failures, the last failure, and whether delivery was paused automatically.',
    input: toolInput(byId),
    method: 'GET',
    path: '/webhooks/{webhookId}/health',
    hints: READS,
  },
  {
    name: 'reenable_webhook',
    title: 'Re-enable a webhook',
    description: 'Resumes a subscription that was paused after repeated failures, resetting the paused flag and counters without sending anything.',
    input: toolInput(byId),
    method: 'POST',
    path: '/webhooks/{webhookId}/reenable',
    hints: { ...CHANGES, idempotentHint: true },
  },
  {
    name: 'get_webhook_signing_secret',
    title: 'Get the signing secret',
    description: "Returns a subscription's signing secret for verifying X-Webhook-Signature on the receiver (null when signing is off); do not show it in chat unless the user asks.",
    input: toolInput(byId),
    method: 'GET',
    path: '/webhooks/{webhookId}/signing-secret',
    hints: READS,
  },
  {
    name: 'rotate_webhook_signing_secret',
    title: 'Rotate the signing secret',
    description: 'Mints a new signing secret and turns signing on; the old secret stops working at once, so the receiver must be updated.',
    input: toolInput(byId),
    method: 'POST',
    path: '/webhooks/{webhookId}/signing-secret',
    hints: { ...REMOVES, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'turn_off_webhook_signing',
    title: 'Turn off signing',
    description: 'Removes the signing secret of a subscription; later deliveries carry no signature headers.',
    input: toolInput(byId),
    method: 'DELETE',
    path: '/webhooks/{webhookId}/signing-secret',
    hints: { ...REMOVES, openWorldHint: false },
  },
  {
    name: 'list_webhook_deliveries',
    title: 'List webhook deliveries',
    description: 'Lists recent delivery attempts of a subscription, newest first, paged with cursor; use it to see why a receiver missed events.',
    input: toolInput({ ...byId, query: DeliveriesQuery }),
    method: 'GET',
    path: '/webhooks/{webhookId}/deliveries',
    hints: READS,
  },
  {
    name: 'replay_webhook',
    title: 'Replay webhook events',
    description:
      'Delivers again the events of a time range (since, optional until) to a subscription; by default only events that were not delivered, include_delivered true resends all. Receivers should de-duplicate by X-Webhook-Delivery.',
    input: toolInput({ ...byId, body: ReplayWebhookBody }),
    method: 'POST',
    path: '/webhooks/{webhookId}/replay',
    hints: ACTS,
  },
]
