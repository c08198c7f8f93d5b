/**
 * Webhook payloads of the page inbox (upstreams 5.3), parsed with zod: `object: page` (Messenger) and
 * `object: instagram` (the linked professional account; `entry.id` is that account's id, not the page's). Items the
 * service does not act on (reactions, postbacks, standby threads) parse as `other` and are acknowledged.
 */
import { z } from 'zod'

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
})

export const MessagingItem = z.object({
  sender: Id,
  recipient: Id,
  timestamp: z.number().optional(),
  message: Message.optional(),
  delivery: z.object({ mids: z.array(z.string()).optional(), watermark: z.number() }).optional(),
  // Messenger reads carry a watermark (everything before it is read); Instagram's name the message read.
  read: z.object({ watermark: z.number().optional(), mid: z.string().optional() }).optional(),
})
export type MessagingItem = z.infer<typeof MessagingItem>

export const WebhookPayload = z.object({
  object: z.enum(['page', 'instagram']),
  entry: z.array(z.object({ id: z.string(), time: z.number().optional(), messaging: z.array(MessagingItem).optional() })),
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
      mediaUrl: string | null
      mediaType: string | null
      at: number | null
    }
  | { kind: 'echo'; surface: Surface; ownerId: string; mid: string }
  | { kind: 'delivered'; surface: Surface; ownerId: string; senderId: string; mids: string[]; watermark: number }
  | { kind: 'read'; surface: Surface; ownerId: string; senderId: string; watermark: number | null; mid: string | null }
  | { kind: 'other' }

/** Content types for the attachment kinds Graph names (a hint; the URL is a CDN link). */
const MEDIA_TYPES: Record<string, string> = { image: 'image/*', video: 'video/*', audio: 'audio/*', file: 'application/octet-stream' }

export function webhookEvents(payload: WebhookPayload): WebhookEvent[] {
  const surface: Surface = payload.object
  const out: WebhookEvent[] = []
  for (const entry of payload.entry) {
    for (const item of entry.messaging ?? []) out.push(eventOf(surface, entry.id, item))
  }
  return out
}

function eventOf(surface: Surface, ownerId: string, item: MessagingItem): WebhookEvent {
  if (item.message?.is_echo) return { kind: 'echo', surface, ownerId, mid: item.message.mid }
  if (item.message) {
    const media = item.message.attachments?.find((a) => typeof a.payload?.url === 'string')
    return {
      kind: 'message',
      surface,
      ownerId,
      senderId: item.sender.id,
      mid: item.message.mid,
      text: item.message.text ?? '',
      mediaUrl: media?.payload?.url ?? null,
      mediaType: media ? (MEDIA_TYPES[media.type] ?? null) : null,
      at: item.timestamp ?? null,
    }
  }
  if (item.delivery)
    return { kind: 'delivered', surface, ownerId, senderId: item.sender.id, mids: item.delivery.mids ?? [], watermark: item.delivery.watermark }
  if (item.read) return { kind: 'read', surface, ownerId, senderId: item.sender.id, watermark: item.read.watermark ?? null, mid: item.read.mid ?? null }
  return { kind: 'other' }
}
