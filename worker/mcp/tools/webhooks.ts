/**
 * Tools for webhook subscriptions (spec 4.8): events, subscriptions, health, signing, the delivery log and replay,
 * read off routes/webhooks.ts and routes/webhook-operations.ts (lib/tool-spec.ts `routeTools`), so the two cannot
 * disagree. `GET /webhooks/{webhookId}` has no tool: the spec's tool list is fixed, and list_webhooks shows the same fields.
 */
import { ACTS, READS, REMOVES, routeTools } from '../../lib/tool-spec'
import { webhooksRoutes } from '../../routes/webhooks'

/** Changes gateway state only: nothing is sent to a receiver by the call itself. */
const CHANGES = { ...ACTS, openWorldHint: false }

export const webhookTools = routeTools(webhooksRoutes, '/webhooks', [
  { name: 'list_webhook_events', hints: READS },
  { name: 'list_webhooks', hints: READS },
  { name: 'create_webhook', hints: CHANGES },
  { name: 'update_webhook', hints: { ...REMOVES, openWorldHint: false } },
  // Not idempotent by id: after a deletion the same positional id names the next subscription.
  { name: 'delete_webhook', hints: { ...REMOVES, idempotentHint: false, openWorldHint: false } },
  { name: 'test_webhook', hints: ACTS },
  { name: 'get_webhook_health', hints: READS },
  { name: 'reenable_webhook', hints: { ...CHANGES, idempotentHint: true } },
  { name: 'get_webhook_signing_secret', hints: READS },
  { name: 'rotate_webhook_signing_secret', hints: { ...REMOVES, idempotentHint: false, openWorldHint: false } },
  { name: 'turn_off_webhook_signing', hints: { ...REMOVES, openWorldHint: false } },
  { name: 'list_webhook_deliveries', hints: READS },
  { name: 'replay_webhook', hints: ACTS },
])
