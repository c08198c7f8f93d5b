/**
 * Webhook payloads of the page inbox (upstreams 5.3), parsed with zod: `object: page` (Messenger) and
 * `object: instagram` (the linked professional account; `entry.id` is that account's id, not the page's). Items the
 * service does not act on (postbacks, standby threads) parse as `other` and are acknowledged.
 */
import { z } from 'zod'
import type { Attachment as StoreAttachment } from '../../account/inbound-queue.shared'
import { fileNameHint } from '../../media/ingest-url'

const Id = z.object({ id: z.string() })

const Attachment = z.object({
  type: z.string(),
  payload: z.object({ url: z.string().optional() }).passthrough().nullish(),
})

const Message = z.object({
  mid: z.string(),
  text: z.string().optional(),
  is_echo: z.boolean().optional(),
  attachments: z.array(Attachment).optional(),
  /** A quoted reply: the message it answers (issue 25). */
  reply_to: z.object({ mid: z.string() }).passthrough().nullish(),
})

export const MessagingItem = z.object({
  sender: Id,
  recipient: Id,
  timestamp: z.number().optional(),
  message: Message.optional(),
  delivery: z.object({ mids: z.array(z.string()).optional(), watermark: z.number() }).optional(),
  // Messenger reads carry a watermark (everything before it is read); Instagram's name the message read.
  read: z.object({ watermark: z.number().optional(), mid: z.string().optional() }).optional(),
  // message_reactions: a person reacted to (or took back a reaction to) a message of the conversation.
  reaction: z.object({ mid: z.string(), action: z.enum(['react', 'unreact']), emoji: z.string().optional(), reaction: z.string().optional() }).optional(),
})
export type MessagingItem = z.infer<typeof MessagingItem>

export const WebhookPayload = z.object({
  object: z.enum(['page', 'instagram']),
  // Each item is read on its own: one Graph does not shape as documented (or a kind this code does not know) is
  // `other`, and the other items of the same delivery, acknowledged together, are still stored.
  entry: z.array(z.object({ id: z.string(), time: z.number().optional(), messaging: z.array(MessagingItem.nullable().catch(null)).optional() })),
})
export type WebhookPayload = z.infer<typeof WebhookPayload>

export type Surface = 'page' | 'instagram'

/** What one messaging item means to the service. */
export type WebhookEvent =
  | {
      kind: 'message'
      surface: Surface
      ownerId: string
      senderId: string
      mid: string
      text: string
      /** The person's files (image, video, audio, file), in order; their CDN links expire, so they are fetched into the store. */
      attachments: StoreAttachment[]
      at: number | null
      /** The mid of the message this one quotes, when it is a reply. */
      replyTo: string | null
    }
  | { kind: 'reaction'; surface: Surface; ownerId: string; senderId: string; mid: string; emoji: string | null; at: number | null }
  | { kind: 'echo'; surface: Surface; ownerId: string; mid: string }
  | { kind: 'delivered'; surface: Surface; ownerId: string; senderId: string; mids: string[]; watermark: number }
  | { kind: 'read'; surface: Surface; ownerId: string; senderId: string; watermark: number | null; mid: string | null }
  | { kind: 'other' }

/**
 * The attachment types that are the person's own files, with the family they name (a hint: the CDN's answer gives
 * the exact type). Shares of posts and reels, story mentions and link fallbacks are not files and are not fetched.
 */
const MEDIA_TYPES: Record<string, { contentType: string; kind: StoreAttachment['kind'] }> = {
  image: { contentType: 'image/*', kind: 'image' },
  video: { contentType: 'video/*', kind: 'video' },
  audio: { contentType: 'audio/*', kind: 'audio' },
  file: { contentType: 'application/octet-stream', kind: 'document' },
}

function attachmentsOf(message: z.infer<typeof Message>): StoreAttachment[] {
  const out: StoreAttachment[] = []
  for (const a of message.attachments ?? []) {
    const type = MEDIA_TYPES[a.type]
    const url = a.payload?.url
    if (!type || typeof url !== 'string') continue
    out.push({ url, contentType: type.contentType, fileName: a.type === 'file' ? fileNameHint(url) : null, kind: type.kind })
  }
  return out.slice(0, 10)
}

export function webhookEvents(payload: WebhookPayload): WebhookEvent[] {
  const surface: Surface = payload.object
  const out: WebhookEvent[] = []
  for (const entry of payload.entry) {
    for (const item of entry.messaging ?? []) out.push(eventOf(surface, entry.id, item))
  }
  return out
}

function eventOf(surface: Surface, ownerId: string, item: MessagingItem | null): WebhookEvent {
  if (!item) return { kind: 'other' }
  if (item.message?.is_echo) return { kind: 'echo', surface, ownerId, mid: item.message.mid }
  if (item.message) {
    return {
      kind: 'message',
      surface,
      ownerId,
      senderId: item.sender.id,
      mid: item.message.mid,
      text: item.message.text ?? '',
      attachments: attachmentsOf(item.message),
      at: item.timestamp ?? null,
      replyTo: item.message.reply_to?.mid ?? null,
    }
  }
  if (item.reaction) {
    const r = item.reaction
    // Graph names the emoji (and a word for it); an unreact carries neither for sure.
    const emoji = r.action === 'unreact' ? null : (r.emoji ?? null)
    return { kind: 'reaction', surface, ownerId, senderId: item.sender.id, mid: r.mid, emoji, at: item.timestamp ?? null }
  }
  if (item.delivery)
    return { kind: 'delivered', surface, ownerId, senderId: item.sender.id, mids: item.delivery.mids ?? [], watermark: item.delivery.watermark }
  if (item.read) return { kind: 'read', surface, ownerId, senderId: item.sender.id, watermark: item.read.watermark ?? null, mid: item.read.mid ?? null }
  return { kind: 'other' }
}
