/** Webhook shapes (spec 2 and 4.8): subscriptions, per-URL health, signing secrets, tests, the delivery log, replay. */
import { z } from 'zod'
import { DELIVERY_STATUSES, WEBHOOK_ORIGINS } from '../d1'
import { EVENT_TYPES, EXTENSION_EVENT_TYPES, SUBSCRIBABLE_EVENTS } from '../events'
import { DateTime, queryInt, SuccessFlag } from './common'

export const FAILURE_TYPES = ['permanent', 'temporary', 'timeout', 'network', 'unknown'] as const
export type FailureType = (typeof FAILURE_TYPES)[number]

export const MAX_WEBHOOK_NAME_CHARS = 100

export const WebhookSubscription = z
  .object({
    id: z.string().meta({ description: 'Position in the list (0-based); shifts when an earlier subscription is deleted. Prefer the name', example: '0' }),
    name: z.string().nullable().meta({ description: 'Display name, also usable as webhookId', example: 'crm-sync' }),
    url: z.string().meta({ example: 'https://hooks.example.com/gateway' }),
    subscribed_to: z.array(z.enum(SUBSCRIBABLE_EVENTS)),
    created_at: DateTime.nullable(),
    enabled: z.boolean().meta({ description: 'Deliveries happen only when true' }),
    retries_enabled: z.boolean().meta({ description: 'Failed deliveries are retried after 1 min, 5 min, 30 min and 2 h' }),
    signing_enabled: z.boolean().meta({ description: 'True when a signing secret is set (deliveries carry X-Webhook-Signature)' }),
    signing_secret_created_at: DateTime.nullable(),
    origin: z.enum(WEBHOOK_ORIGINS).optional().meta({
      description:
        'Who made it: `rest` (this API or the create_webhook tool) or `mcp` (an MCP client with `events/subscribe`, which refreshes it; docs/mcp.md)',
    }),
    expires_at: DateTime.nullable().optional().meta({ description: 'An `mcp` subscription stops delivering at this time unless its client refreshes it' }),
  })
  .meta({ id: 'WebhookSubscription' })

export const WebhookHealth = z
  .object({
    consecutive_failures: z.number().int().meta({ description: 'Resets to 0 on a success' }),
    total_failures: z.number().int(),
    total_successes: z.number().int(),
    is_disabled: z.boolean().meta({ description: 'True while delivery to this URL is paused (re-enable or change the URL to resume)' }),
    disabled_at: DateTime.nullable(),
    disabled_reason: z.string().nullable(),
    last_failure: z
      .object({
        timestamp: DateTime.nullable(),
        status_code: z.number().int().nullable().meta({ description: "The receiver's HTTP status; null when none came back" }),
        failure_type: z.enum(FAILURE_TYPES),
        error_message: z.string(),
      })
      .nullable(),
    last_success_at: DateTime.nullable(),
    created_at: DateTime.nullable(),
    updated_at: DateTime.nullable(),
  })
  .meta({ id: 'WebhookHealthStatus' })

// An enum, so the OpenAPI document and the MCP tools' input schemas list the valid names; the message names them too.
const eventName = z.enum(SUBSCRIBABLE_EVENTS, {
  error: (issue) =>
    typeof issue.input === 'string'
      ? `unknown event '${issue.input}'; valid events are ${SUBSCRIBABLE_EVENTS.join(', ')}`
      : `must be an event name: ${SUBSCRIBABLE_EVENTS.join(', ')}`,
})

const SubscribedTo = z
  .array(eventName)
  .min(1, 'subscribe to at least one event')
  .max(SUBSCRIBABLE_EVENTS.length * 2)
  .transform((names) => [...new Set(names)])
  .meta({ description: 'Event names (GET /webhooks/events); at least one; an unknown name is refused', example: ['message.received'] })

const Name = z
  .string()
  .trim()
  .min(1)
  .max(MAX_WEBHOOK_NAME_CHARS)
  .refine((n) => !/^\d+$/.test(n), 'must not be only digits (digits address a subscription by position)')
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point of this check
  .refine((n) => !/[/\\\u0000-\u001f\u007f]/.test(n), 'must not contain slashes or control characters')
  .refine((n) => n !== 'events', "'events' is reserved")
  .meta({ description: 'Unique among your subscriptions; usable as webhookId', example: 'crm-sync' })

const Url = z.string().trim().min(1).max(2048).meta({ description: 'Public https URL receiving event POSTs', example: 'https://hooks.example.com/gateway' })

export const CreateWebhookBody = z
  .object({
    url: Url,
    subscribed_to: SubscribedTo,
    name: Name.optional().meta({ description: 'Defaults to a timestamped name such as webhook-20261121-120000' }),
    retries_enabled: z.boolean().default(false),
    enabled: z.boolean().default(true),
    generate_signing_secret: z.boolean().default(false).meta({ description: 'Mint a signing secret and return it once in this answer' }),
  })
  .meta({ id: 'CreateWebhookBody' })

export const UpdateWebhookBody = z
  .object({
    url: Url.optional().meta({ description: 'A new URL also resumes a paused delivery' }),
    subscribed_to: SubscribedTo.optional(),
    name: Name.optional(),
    retries_enabled: z.boolean().optional(),
    enabled: z.boolean().optional().meta({ description: 'false switches delivery off' }),
  })
  .refine((b) => b.url !== undefined || b.subscribed_to !== undefined || b.name !== undefined, 'give at least one of url, subscribed_to, name')
  .meta({ id: 'UpdateWebhookBody', description: 'At least one of url, subscribed_to, name; omitted fields keep their values' })

export const WebhookIdParam = z.object({
  webhookId: z
    .string()
    .min(1)
    .max(MAX_WEBHOOK_NAME_CHARS)
    .meta({
      param: { name: 'webhookId', in: 'path' },
      description: 'The subscription’s exact name (preferred) or its id, the 0-based position in the list, which shifts after a deletion',
      example: 'crm-sync',
    }),
})

export const EventList = z
  .object({
    success: SuccessFlag,
    events: z.array(z.enum(EVENT_TYPES)).meta({ description: 'The nine standard events' }),
    descriptions: z.record(z.string(), z.string()).meta({ description: 'One line per event of `events`' }),
    extension_events: z
      .array(z.enum(EXTENSION_EVENT_TYPES))
      .meta({ description: 'Events beyond the standard nine, equally subscribable: message.approval_required, message.reaction, account.at_risk' }),
    extension_descriptions: z.record(z.string(), z.string()).meta({ description: 'One line per event of `extension_events`' }),
  })
  .meta({ id: 'WebhookEventList' })

export const WebhookList = z.object({ success: SuccessFlag, webhooks: z.array(WebhookSubscription) }).meta({ id: 'WebhookList' })

export const WebhookCreated = z
  .object({
    success: SuccessFlag,
    webhook: WebhookSubscription,
    signing_secret: z
      .string()
      .nullable()
      .meta({ description: 'Only when generate_signing_secret was true; shown this once (GET …/signing-secret reads it later)' }),
  })
  .meta({ id: 'WebhookCreated' })

export const WebhookAnswer = z.object({ success: SuccessFlag, webhook: WebhookSubscription }).meta({ id: 'WebhookAnswer' })

export const WebhookDeleted = z
  .object({ success: SuccessFlag, webhook_id: z.string(), name: z.string().nullable(), url: z.string() })
  .meta({ id: 'WebhookDeleted' })

export const HealthAnswer = z
  .object({
    success: SuccessFlag,
    webhook_id: z.string(),
    url: z.string(),
    // Null until the first delivery attempt (spec part 2). A union, not `.nullable()` with a description: that inlines
    // the schema, and the OpenAPI document would lose the spec's WebhookHealthStatus component.
    health: z.union([WebhookHealth, z.null()]),
  })
  .meta({ id: 'WebhookHealthAnswer' })

export const SigningSecretAnswer = z
  .object({
    success: SuccessFlag,
    webhook_id: z.string(),
    signing_enabled: z.boolean(),
    signing_secret: z.string().nullable(),
    signing_secret_created_at: DateTime.nullable(),
  })
  .meta({ id: 'WebhookSigningSecret' })

export const TestWebhookBody = z
  .object({ event: eventName.optional().meta({ description: 'Any listed event; default message.delivered' }) })
  .meta({ id: 'TestWebhookBody' })

export const TestWebhookResult = z
  .object({
    success: SuccessFlag,
    webhook_id: z.string(),
    event: z.enum(SUBSCRIBABLE_EVENTS),
    delivery_id: z.string().meta({ description: 'The X-Webhook-Delivery of the test request (starts with dlv_test_)' }),
    delivered: z.boolean(),
    status_code: z.number().int().nullable(),
    duration_ms: z.number().int(),
    failure_type: z.enum(FAILURE_TYPES).nullable().meta({ description: 'Set when delivered is false' }),
    error_message: z.string().nullable().meta({ description: 'Set when delivered is false' }),
  })
  .meta({ id: 'TestWebhookResult' })

export const WebhookDelivery = z
  .object({
    delivery_id: z.string().meta({ description: 'The X-Webhook-Delivery header: the same on every retry and replay' }),
    event: z.string().meta({ description: 'The event name', example: 'message.received' }),
    event_id: z.string(),
    status: z.enum(DELIVERY_STATUSES).meta({
      description:
        'pending: an attempt is due or a retry is scheduled; delivered; failed: the last attempt failed and no retry follows; paused: not sent because the URL was paused; skipped: a scheduled retry was dropped because the subscription or webhooks were switched off',
    }),
    attempts: z.number().int(),
    last_attempt_at: DateTime.nullable(),
    last_status_code: z.number().int().nullable(),
    last_failure_type: z.enum(FAILURE_TYPES).nullable(),
    last_error: z.string().nullable(),
    next_attempt_at: DateTime.nullable(),
    delivered_at: DateTime.nullable(),
    created_at: DateTime.meta({ description: 'When the event happened' }),
  })
  .meta({ id: 'WebhookDelivery' })

export const DeliveriesQuery = z.object({
  limit: queryInt(1, 100).default(50).meta({ description: '1 to 100, default 50' }),
  cursor: z.string().max(200).optional().meta({ description: 'The previous answer’s next_cursor' }),
  status: z.enum(DELIVERY_STATUSES).optional(),
})

export const DeliveryList = z
  .object({ success: SuccessFlag, webhook_id: z.string(), deliveries: z.array(WebhookDelivery), next_cursor: z.string().nullable() })
  .meta({ id: 'WebhookDeliveryList' })

export const ReplayBody = z
  .object({
    since: DateTime.meta({ description: 'Start of the window (inclusive); at most 7 days ago' }),
    until: DateTime.optional().meta({ description: 'End of the window (exclusive); default now' }),
    include_delivered: z.boolean().default(false).meta({ description: 'Also re-send events already delivered (default: only undelivered ones)' }),
  })
  .meta({ id: 'ReplayWebhookBody' })

export const ReplayResult = z
  .object({
    success: SuccessFlag,
    webhook_id: z.string(),
    queued: z.number().int().meta({ description: 'Deliveries queued for sending now, each with its original delivery id' }),
    already_delivered: z.number().int().meta({ description: 'Skipped because they were delivered (include_delivered false)' }),
    in_flight: z.number().int().meta({ description: 'Left alone because an attempt is running right now' }),
    next_since: DateTime.nullable().meta({ description: 'Set when the window held more events than one replay takes; call again with since = next_since' }),
  })
  .meta({ id: 'ReplayWebhookResult' })
