/**
 * What an agent does in a conversation beyond sending (issue 25, extensions of the spec): reactions, typing, read
 * marks, the on-network lookup, and the dry run of a send. Which channel supports which is `CHAT_ACTIONS` per
 * channel (worker/channels/contract.ts `actions`); docs/api.md shows the same table.
 */
import { z } from 'zod'
import { DateTime, E164 } from './common'
import { SendMessageBody } from './messages'

/** The actions a channel may support, in the order the support tables show them. */
export const CHAT_ACTIONS = ['reply', 'react', 'typing', 'read', 'lookup'] as const
export type ChatActionName = (typeof CHAT_ACTIONS)[number]

/** How each action is named in docs/api.md's support table and in `unsupported_on_channel` messages. */
export const CHAT_ACTION_TITLES: Record<ChatActionName, string> = {
  reply: 'Quoted replies',
  react: 'Reactions',
  typing: 'Typing',
  read: 'Read marks',
  lookup: 'On-network lookup',
}

/** One emoji: a single grapheme that starts with a pictograph or a flag's regional indicator. */
function isOneEmoji(text: string): boolean {
  if (!/^[\p{Extended_Pictographic}\p{Regional_Indicator}]/u.test(text)) return false
  const graphemes = [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)]
  return graphemes.length === 1
}

export const ReactionBody = z
  .object({
    emoji: z
      .string()
      .min(1)
      .max(32)
      .refine(isOneEmoji, 'must be one emoji')
      .meta({ description: 'One emoji; it replaces the account’s earlier reaction to the message', example: '👍' }),
  })
  .meta({ id: 'ReactionBody' })

export const TypingBody = z
  .object({ to: SendMessageBody.shape.to })
  .meta({ id: 'TypingBody', description: 'The person the account is typing to, named as a send names them' })

export const ActionDone = z
  .object({
    action: z.enum(['react', 'unreact', 'typing', 'read']),
    account_id: z.string(),
    message_id: z.string().nullable().meta({ description: 'The message reacted to or marked read; null for typing' }),
    contact_id: z.string(),
    at: DateTime,
  })
  .meta({ id: 'ActionDone' })

export const LookupQuery = z.object({
  phone: E164.meta({ description: 'The number to look up, E.164', example: '+447700900123' }),
})

export const LookupResult = z
  .object({
    account_id: z.string(),
    channel: z.string(),
    phone: z.string(),
    on_network: z.boolean().nullable().meta({
      description:
        'true: the number has an account on the channel; false: it has none; null: the channel did not say (beta answers only for numbers in the account’s address book, see `reason`)',
    }),
    reason: z.string().nullable().meta({ description: 'Why `on_network` is null' }),
    cached: z.boolean().meta({ description: 'Answered from the account’s lookup cache (24 h) without asking the network' }),
    checked_at: DateTime.meta({ description: 'When the network answered' }),
  })
  .meta({ id: 'LookupResult' })

export const SEND_VERDICTS = ['would_send', 'would_queue_for_approval', 'would_fail'] as const

export const SendAllowances = z
  .object({
    day: z.string().meta({ description: 'The UTC day the figures are for, YYYY-MM-DD' }),
    sends_left: z.number().int().meta({ description: 'Sends left today on this account' }),
    new_contacts_left: z.number().int().meta({ description: 'New contacts left today (0 while the account is at risk or warming up)' }),
    sends_to_contact_left: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Messages left to this person before they reply (loop guard); null when the check did not reach the person' }),
    ramp_day: z.number().int().nullable().meta({ description: 'Warm-up day of an alpha number; null for channels without a ramp' }),
    at_risk: z.boolean().meta({ description: 'A ban-risk signal is active (GET /accounts `risk`): new contacts are paused' }),
  })
  .meta({ id: 'SendAllowances' })

export const SendCheck = z
  .object({
    dry_run: z.literal(true),
    verdict: z.enum(SEND_VERDICTS).meta({
      description:
        '`would_send`: the send would be queued; `would_queue_for_approval`: it would be held for the owner; `would_fail`: it would be refused with `error`',
    }),
    error: z
      .object({
        status: z.number().int().meta({ description: 'The HTTP status the send would answer' }),
        error_code: z.string(),
        error: z.string(),
        retry_after_s: z.number().int().optional(),
      })
      .nullable()
      .meta({ description: 'The exact error the send would get; null unless `would_fail`' }),
    account_id: z.string().nullable().meta({ description: 'The account that would send; null when none could be picked' }),
    contact_id: z.string().nullable().meta({ description: 'The recipient’s contact id (existing, or the one a send would create)' }),
    new_contact: z.boolean().nullable().meta({ description: 'Whether the send would count as a new contact; null when the check stopped before' }),
    allowances: SendAllowances.nullable().meta({ description: 'What is left before this send; null when no account could be picked' }),
  })
  .meta({ id: 'SendCheck' })
