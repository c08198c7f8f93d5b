/**
 * Webhook event names and payload shapes (spec part 6), and the arguments an MCP events subscription narrows them
 * by (SEP-3415 `inputSchema`). Message events carry `error` as a plain string.
 */
import { z } from 'zod'
import { CHANNELS } from './d1'
import { RISK_SIGNALS } from './frames'
import { MessageMedia } from './media'
import { E164 } from './phone'

export const EVENT_TYPES = [
  'message.received',
  'message.sent',
  'message.delivered',
  'message.read',
  'message.failed',
  'account.connected',
  'account.disconnected',
  'account.restricted',
  'account.limit_reached',
] as const
/**
 * Events beyond spec part 6's nine (docs/agent-safety.md). Subscribable like the others; GET /webhooks/events
 * keeps `events` and `descriptions` at the spec's nine and names these under `extension_events` and
 * `extension_descriptions`.
 */
export const EXTENSION_EVENT_TYPES = ['message.approval_required', 'message.reaction', 'account.at_risk'] as const
export const SUBSCRIBABLE_EVENTS = [...EVENT_TYPES, ...EXTENSION_EVENT_TYPES] as const
/** Delivered only to subscriptions the owner configured: its links decide a held message (docs/agent-safety.md). */
export const OWNER_ONLY_EVENT = 'message.approval_required' satisfies EventType
export type EventType = (typeof SUBSCRIBABLE_EVENTS)[number]
export type MessageEventType = Extract<EventType, `message.${string}`>
export type AccountEventType = Extract<EventType, `account.${string}`>

export const EVENT_DESCRIPTIONS: Record<EventType, string> = {
  'message.approval_required':
    'A key that holds first messages for approval sent to someone who never wrote; approval carries signed approve and reject links (extension)',
  'message.reaction': 'A contact reacted to a message of the chat (either direction) or took the reaction back; reaction says which (extension)',
  'account.at_risk': 'The network warned an account it is near or at one of its limits (signal, until, advice); new contacts pause while it lasts (extension)',
  'message.received': 'A contact sent a message to a connected account',
  'message.sent': 'A sent message left the account',
  'message.delivered': "A sent message reached the contact's phone",
  'message.read': 'The contact read a sent message',
  'message.failed': 'A sent message could not be delivered; message.error says why',
  'account.connected': 'An account finished connecting',
  'account.disconnected': 'An account logged out or lost its session, or was removed',
  'account.restricted': 'The channel or the safety limits stopped an account from sending',
  'account.limit_reached':
    'A daily plan limit was hit; fires the first time it is hit (once per limit per UTC day); sends resume the next UTC day or after an upgrade',
}

/** The fields every event payload starts with; their descriptions render into docs/webhooks.md (npm run docs). */
const eventName = z.enum(SUBSCRIBABLE_EVENTS).meta({ description: 'The event name, as in `X-Webhook-Event`' })
const createdAt = z.iso.datetime().meta({ description: 'When the event happened' })

export const MessageEventPayload = z
  .object({
    event: eventName,
    created_at: createdAt,
    account_id: z.string().meta({ description: 'The account the message belongs to (for alpha its phone number)' }),
    channel: z.string().meta({ description: '`alpha_web`, `beta`, `sms`, `social` or `custom`' }),
    message: z.object({
      id: z.string().meta({ description: 'The message id (`GET /v1/messages/{id}`)' }),
      direction: z.enum(['inbound', 'outbound']),
      text: z.string(),
      media: MessageMedia.nullable().meta({ description: 'The attachment, null when there is none' }),
      status: z.string().meta({
        description: '`received` on message.received; `sent`, `delivered`, `read`, `failed` on those events; `awaiting_approval` on message.approval_required',
      }),
      error: z.string().nullable().meta({ description: 'message.failed: why, in one sentence; null otherwise' }),
      reply_to: z.string().optional().meta({ description: 'Extension, on a reply only: the message it quotes, by our id when stored, else the network’s' }),
    }),
    contact: z.object({
      id: z.string().meta({ description: 'Reply to this person with `to.contact_id`' }),
      phone: z.string().nullable(),
      name: z.string().nullable(),
      /** beta only: the person's public @username (without the @), null when they have none. */
      username: z.string().nullable().optional().meta({ description: 'beta only: the public @username without the @' }),
    }),
    /** `message.approval_required` only: where the owner decides, until `expires_at`. */
    approval: z
      .object({
        page_url: z.string().meta({ description: 'The page where the owner reads the message and decides' }),
        approve_url: z.string(),
        reject_url: z.string(),
        expires_at: z.iso.datetime().meta({ description: 'After this the message fails with `approval_expired`' }),
        key_id: z.string().meta({ description: 'The key that sent the message' }),
        key_label: z.string().nullable(),
      })
      .optional()
      .meta({ description: 'message.approval_required only' }),
    reaction: z
      .object({ emoji: z.string().nullable(), from: z.string(), at: z.iso.datetime() })
      .optional()
      .meta({ description: 'message.reaction only (extension): the emoji (null when taken back), the contact id who reacted, when' }),
  })
  .meta({ id: 'MessageEventPayload' })

export const AccountEventPayload = z
  .object({
    event: eventName,
    created_at: createdAt,
    account_id: z.string().nullable().meta({ description: 'The account; null on account.limit_reached' }),
    channel: z.string().nullable().meta({ description: 'The account’s channel; null on account.limit_reached' }),
    account: z.object({
      id: z.string().nullable(),
      channel: z.string().nullable(),
      identifier: z.string().nullable().meta({ description: 'The phone number, or the beta @username when no number is known' }),
      status: z.string().meta({ description: 'The account’s status after the event; `limited` on account.limit_reached' }),
      reason: z.string().nullable().meta({
        description: 'Why: e.g. `logged_out` (disconnected), `blocked_by_alpha` (restricted), `daily_send_cap` or `new_contact_cap` (limit reached)',
      }),
    }),
    /** `account.at_risk` only (issue 25): the signal, when it ends (null: until the network lifts it), and what to do. */
    signal: z.enum(RISK_SIGNALS).optional(),
    until: z.iso.datetime().nullable().optional(),
    advice: z.string().optional(),
  })
  .meta({ id: 'AccountEventPayload' })

/**
 * Added to every delivered body, never stored: the delivery's identity, inside the signature, so a captured body
 * cannot be re-sent under another `X-Webhook-Delivery` (spec 6 allows extra fields). Receivers de-duplicate on
 * `delivery_id` (the same on every retry and replay) or `event_id` (one event, several subscriptions).
 */
export const DeliveryIdentity = z
  .object({
    event_id: z.string().meta({ description: 'The event; one event delivered to two subscriptions has one `event_id`' }),
    delivery_id: z.string().meta({ description: 'Equal to `X-Webhook-Delivery`, the same on every retry and replay: de-duplicate on it' }),
  })
  .meta({ id: 'WebhookDeliveryIdentity' })

export type MessageEvent = z.infer<typeof MessageEventPayload>
export type AccountEvent = z.infer<typeof AccountEventPayload>
export type EventPayload = MessageEvent | AccountEvent

/** The payload shape of each event: MCP `events/list` publishes these as `payloadSchema` (worker/mcp/events). */
export function payloadSchemaOf(type: EventType): typeof MessageEventPayload | typeof AccountEventPayload {
  return type.startsWith('message.') ? MessageEventPayload : AccountEventPayload
}

/** Accounts a subscription may name; a key limited to accounts names among its own. */
export const MAX_FILTER_ACCOUNTS = 20

/**
 * What an MCP events subscription narrows its events by (SEP-3415 `arguments`; every field optional, all given
 * ones must match). Stored as the filter of an MCP webhook subscription, so deliveries apply the same rule.
 */
export const EventFilter = z
  .object({
    account_ids: z
      .array(z.string().min(1).max(64))
      .min(1)
      .max(MAX_FILTER_ACCOUNTS)
      .optional()
      .meta({ description: 'Only events of these accounts (their account_id); default every account the key may use' }),
    channel: z.enum(CHANNELS).optional().meta({ description: 'Only events of accounts on this channel' }),
    contact_id: z.string().min(1).max(64).optional().meta({ description: 'Only messages with this contact (contact.id of a message)' }),
    contact_phone: E164.optional().meta({ description: 'Only messages with the contact at this number (E.164)' }),
  })
  .strict()
export type EventFilter = z.infer<typeof EventFilter>

/** Account events have no contact, so their subscriptions take the account and channel arguments only. */
export const AccountEventFilter = EventFilter.pick({ account_ids: true, channel: true }).strict()

/** The subscription arguments an event takes (`inputSchema` in MCP `events/list`). */
export function filterSchemaOf(type: EventType): typeof EventFilter | typeof AccountEventFilter {
  return type.startsWith('message.') ? EventFilter : AccountEventFilter
}
