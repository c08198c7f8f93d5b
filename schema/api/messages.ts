/** Message shapes (spec 2 and 4.2): the wire message, the send body, list and wait parameters and answers. */
import { z } from 'zod'
import { MESSAGE_STATUSES } from '../d1'
import { DateTime, E164, queryInt } from './common'
import { MessageMedia } from '../media'

export const MAX_TEXT_CHARS = 4096

export const MessageContact = z
  .object({
    id: z.string().meta({ description: 'Reply with `to.contact_id`: works on every channel' }),
    phone: z.string().nullable(),
    name: z.string().nullable(),
    external_id: z.string().nullable().meta({ description: 'Custom channel: the sender id on your side (its fromId)' }),
    username: z
      .string()
      .nullable()
      .optional()
      .meta({ description: "beta only: the person's public @username (without the @), null when they have none; absent on other channels" }),
    ai_paused: z.boolean().meta({
      description:
        'Set on contacts imported with pause_ai_for_imported_contacts: your agent should leave them to you. The gateway itself runs no AI; this is a flag for your client.',
    }),
  })
  .meta({ id: 'MessageContact' })

/** One reaction on a message (issue 25): the latest of each sender; an extension of spec 2's message. */
export const Reaction = z
  .object({
    emoji: z.string().meta({ description: 'The emoji, as the sender chose it', example: '👍' }),
    from: z.string().meta({ description: 'The contact id of the person who reacted, or `me` for the account’s own reaction' }),
    at: DateTime,
  })
  .meta({ id: 'Reaction' })

export const Message = z
  .object({
    id: z.string().meta({ description: '`msg_…`' }),
    account_id: z.string().nullable().meta({ description: 'The account it was sent from or received on' }),
    direction: z.enum(['inbound', 'outbound']),
    text: z.string(),
    media: MessageMedia.nullable().meta({
      description:
        'One attachment. Inbound media of alpha, beta, SMS/MMS and the page inbox is kept in the media store (docs/media.md); an MMS or page message with several files arrives as one message per file, in order, the text on the first.',
    }),
    status: z.enum(MESSAGE_STATUSES).meta({ description: 'Where the message is: see the lifecycle below' }),
    error: z
      .object({
        code: z.number().int().nullable().meta({ description: 'The upstream’s own code where it gives one (a Twilio ErrorCode, a Graph API error code)' }),
        message: z.string().nullable().meta({ description: 'Why, in one sentence' }),
      })
      .nullable()
      .meta({ description: 'Set when the status is `failed`; null otherwise' }),
    timestamp: DateTime.meta({ description: 'When the message was sent (outbound: accepted) or received' }),
    contact: MessageContact,
    reply_to: z.string().optional().meta({
      description:
        'Extension, present only on a reply: the message it quotes, by our id when that message is stored, else by the id the network gave it (docs/api.md, "Replies, reactions, typing and read marks")',
    }),
    reactions: z.array(Reaction).optional().meta({ description: 'Extension, present only when someone reacted: the latest reaction of each sender' }),
    retry_reason: z.string().optional().meta({
      description:
        'Extension, present only on a queued message whose last delivery attempt will be tried again: why it has not gone out yet (a phone offline, a provider slow-down)',
    }),
  })
  .meta({ id: 'WireMessage' })

const text = z
  .string()
  .min(1, 'must not be empty')
  .refine((t) => [...t].length <= MAX_TEXT_CHARS, `must be at most ${MAX_TEXT_CHARS} characters`)

export const SendMessageBody = z
  .object({
    account_id: z.string().min(1).max(64).optional().meta({ description: 'Optional when exactly one account is connected' }),
    to: z
      .object({
        phone: E164.optional().meta({ description: 'alpha, SMS: a new number creates the contact. beta: existing contacts only' }),
        contact_id: z.string().min(1).max(64).optional(),
        external_id: z.string().min(1).max(256).optional().meta({ description: 'Custom channel: the fromId of the person' }),
        social_id: z.string().min(1).max(256).optional().meta({ description: 'Page inbox: the person id from their inbound message' }),
      })
      // One member names the recipient; `contact_id` may come with the person's own address as well (an agent copying
      // an inbound message's contact), which must then be the contact's (resolve.ts). Two addresses stay ambiguous.
      .refine((to) => [to.phone, to.external_id, to.social_id].filter((v) => v !== undefined).length <= 1 && Object.values(to).some((v) => v !== undefined), {
        error: 'name the recipient with one of to.phone, to.contact_id, to.external_id, to.social_id (to.contact_id may come with the contact’s own address)',
      })
      .meta({ description: 'One member names the recipient; to.contact_id may come with that contact’s own phone, external_id or social_id' }),
    text: text.meta({ description: `Message text, 1 to ${MAX_TEXT_CHARS} characters` }),
    media_url: z
      .url({ protocol: /^https$/, error: 'must be an https URL' })
      .max(2048)
      .optional()
      .meta({ description: 'https URL of one image, video, audio file or document' }),
    reply_to: z.string().min(1).max(64).optional().meta({
      description:
        'Extension: the id of a message of the same account and person to quote (a quoted reply). Not on SMS (422 `unsupported_on_channel`); the quoted message must have reached the network (422 `invalid_reply_to` otherwise)',
    }),
    dry_run: z.boolean().optional().meta({
      description:
        'Extension: true runs every check a send goes through and answers 200 with what would happen (a `SendCheck`), sending, storing and counting nothing (the MCP tool is check_send)',
    }),
  })
  .meta({ id: 'SendMessageBody' })

export const SendAccepted = z
  .object({
    message_id: z.string(),
    status: z
      .enum(['queued', 'awaiting_approval'])
      .meta({ description: '`queued`; `awaiting_approval` (extension) when the key holds first messages for the owner' }),
  })
  .meta({ id: 'SendAccepted' })

export const ListMessagesQuery = z.object({
  limit: queryInt(1, 100).default(50).meta({ description: '1 to 100, default 50' }),
  direction: z.enum(['inbound', 'outbound']).optional(),
  account_id: z.string().min(1).max(64).optional(),
  before: z.string().min(1).max(200).optional().meta({ description: 'The previous page’s next_cursor' }),
})

export const MessageList = z.object({ messages: z.array(Message), next_cursor: z.string().nullable() }).meta({ id: 'MessageList' })

export const WAIT_MAX_S = 55
export const WaitQuery = z.object({
  cursor: z.string().min(1).max(200).optional().meta({ description: 'The cursor of the previous wait; omitted = from now' }),
  account_id: z.string().min(1).max(64).optional().meta({ description: "Omitted = all of the caller's accounts" }),
  timeout_s: queryInt(0, WAIT_MAX_S)
    .default(25)
    .meta({ description: `0 to ${WAIT_MAX_S}, default 25` }),
})

export const WaitResult = z
  .object({
    messages: z.array(Message).meta({ description: 'Inbound messages newer than the cursor, oldest first, at most 50' }),
    cursor: z.string().meta({ description: 'Pass to the next wait' }),
  })
  .meta({ id: 'WaitResult' })

export const MessageIdParam = z.object({
  id: z.string().min(1).max(64).meta({ description: 'The message id (message_id from a send, or id from a listed message)' }),
})

/** GET /messages/archive: one account's archived day (docs/api.md, "Retention and archive"). */
export const ArchiveQuery = z.object({
  account_id: z.string().min(1).max(64).meta({ description: 'The account whose messages to read (also one that was removed since)' }),
  date: z.iso.date().meta({ description: 'The UTC day the messages were sent or received, YYYY-MM-DD', example: '2026-08-01' }),
})
