/** Custom channel shapes (spec 4.7): the bridge's webhook URL, the inbound push, and the state answer. */
import { z } from 'zod'
import { DateTime, SuccessFlag } from './common'

/** The sender of a push without `fromId` (spec 4.7 requires only `body`): one contact per account, this external id. */
export const DEFAULT_FROM_ID = 'unknown'

export const SetCustomWebhookBody = z
  .object({
    webhook_url: z.string().min(1).max(2048).meta({
      description: 'Public https URL that receives outbound messages; put your shared secret in it (the POST is not signed)',
      example: 'https://bridge.example.com/gateway?token=s3cret',
    }),
    actions: z.boolean().optional().meta({
      description:
        'Extension: true when your bridge also takes reactions, typing and read marks, POSTed to the same URL with an `action` field (docs/channels/custom.md); omitted keeps the current setting (off at first), so a bridge written before actions existed never receives one',
    }),
  })
  .meta({ id: 'SetCustomWebhookBody' })

export const CustomChannelState = z
  .object({
    success: SuccessFlag,
    account_id: z.literal('custom'),
    channel: z.literal('custom'),
    status: z
      .enum(['connected', 'restricted', 'not_connected'])
      .meta({ description: 'restricted: a safety limit stopped sending until the service reviews it' }),
    webhook_url: z.string().nullable().meta({ description: 'Masked: origin only, the secret part is hidden' }),
    inbound_url: z.string().meta({ description: 'Where your bridge POSTs inbound messages' }),
    connected_at: DateTime.nullable(),
    actions: z.boolean().optional().meta({ description: 'Extension: the bridge takes reactions, typing and read marks' }),
  })
  .meta({ id: 'CustomChannelState' })

export const CustomChannelRemoved = z
  .object({ success: SuccessFlag, account_id: z.literal('custom'), status: z.enum(['removed', 'not_connected']) })
  .meta({ id: 'CustomChannelRemoved' })

const id = z.union([z.string().min(1).max(256), z.number().int().transform(String)])

export const CustomData = z
  .object({
    body: z.string().max(4096).meta({ description: 'Message text (may be empty when mediaUrl is set)' }),
    fromId: id.optional().meta({
      description: `The sender's id on your side; becomes the contact's external id. Omitted, the message comes from one sender per account whose external id is \`${DEFAULT_FROM_ID}\` (a bridge that does not tell people apart); a reaction needs it`,
    }),
    messageSid: id.optional().meta({ description: 'Your id for this message; a repeated push with it is stored once' }),
    toId: id.optional(),
    // http is let through here only so the dev loopback allowance can apply; the route's SSRF guard demands public https.
    mediaUrl: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional()
      .meta({ description: 'Public https URL of the attachment' }),
    mediaContentType: z.string().max(200).optional(),
    firstName: z.string().max(200).optional(),
    lastName: z.string().max(200).optional(),
    email: z.string().max(320).optional(),
    replyTo: id.optional().meta({
      description: 'Extension: the message this one quotes, by your messageSid for it or by the messageId the gateway POSTed to you',
    }),
    reaction: z
      .object({
        messageId: z.string().min(1).max(64).optional().meta({ description: 'The gateway’s id of the message reacted to (as POSTed to your bridge)' }),
        messageSid: id.optional().meta({ description: 'Or your own messageSid of a message you pushed' }),
        emoji: z.string().max(32).nullable().meta({ description: 'The emoji; null (or empty) takes the person’s reaction back' }),
      })
      .refine((r) => (r.messageId === undefined) !== (r.messageSid === undefined), { message: 'name the message with exactly one of messageId, messageSid' })
      .optional()
      .meta({
        description:
          'Extension: instead of a message, the person (fromId) reacted to one; it lands on that message and as `message.reaction` (body may then be empty)',
      }),
  })
  .refine((d) => d.body.length > 0 || d.mediaUrl || d.reaction, {
    message: 'body must not be empty unless mediaUrl or reaction is set',
    path: ['body'],
  })
  .refine((d) => !d.reaction || d.fromId !== undefined, { message: 'a reaction needs fromId: the person who reacted', path: ['fromId'] })

export const CustomInboundBody = z.object({ customData: CustomData }).meta({ id: 'CustomInboundBody' })

export const CustomInboundResult = z
  .object({
    success: SuccessFlag,
    message_id: z.string(),
    contact_id: z.string(),
    duplicate: z.boolean().meta({ description: 'true when this messageSid was already stored; nothing new was created' }),
    reaction: z
      .literal('applied')
      .optional()
      .meta({ description: 'Extension: the push was a reaction, now on the message `message_id` (that message’s id, not a new one)' }),
  })
  .meta({ id: 'CustomInboundResult' })

/** What the gateway POSTs to the custom channel webhook for each outbound message (spec 4.7). */
export const CustomOutboundPayload = z.object({
  messageId: z.string(),
  contactId: z.string(),
  toId: z.string().nullable(),
  body: z.string(),
  /** The attachment's three fields are all present when there is one, and absent otherwise. */
  mediaUrl: z.string().optional(),
  mediaContentType: z.string().optional(),
  mediaFileName: z.string().optional(),
  isVoiceNote: z.boolean(),
  /** Extension (issue 25), only on a quoted reply: the quoted message by our id, and by your messageSid when it has one. */
  replyTo: z.object({ messageId: z.string(), messageSid: z.string().nullable() }).optional(),
})

/**
 * What the gateway POSTs for a chat action (issue 25) once the bridge opted in (`actions: true`): `action` tells it
 * from a message; `messageId`/`messageSid` name the message reacted to or read up to.
 */
export const CustomActionPayload = z.object({
  action: z.enum(['react', 'unreact', 'typing', 'read']),
  contactId: z.string(),
  toId: z.string().nullable(),
  messageId: z.string().optional(),
  messageSid: z.string().nullable().optional(),
  emoji: z.string().optional(),
})
