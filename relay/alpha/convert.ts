/**
 * Conversion by direction. Inbound: a Baileys `WAMessage` → `InboundMessage`, a `messages.update` → `Receipt`.
 * Outbound: the gateway's text and one fetched media item → Baileys message contents, and the gateway message id →
 * a stable upstream id. Media reaches Baileys only as a Buffer the relay fetched itself, never as a `{url}`.
 */
import { createHash } from 'node:crypto'
import { normalizeMessageContent, toNumber, WAMessageStatus } from '@whiskeysockets/baileys'
import type { AnyMessageContent, proto, WAMessage, WAMessageUpdate } from '@whiskeysockets/baileys'
import type { InboundMessage, InboundReaction, Receipt } from '../connector'
import type { PeerDirectory } from './peers'
import { SendError } from './send-error'
import { SEND_ERROR_RESTRICTED } from './state'

/** Media kinds alpha shows differently. `voice` is an Ogg/Opus audio sent as a voice note (alpha's own format). */
export type MediaKind = 'image' | 'video' | 'audio' | 'voice' | 'document'

export type InboundResult = { ok: true; message: InboundMessage; kind: 'text' | MediaKind | 'sticker' } | { ok: false; reason: string }

/** The text of a message and its media kind, from the content Baileys decrypted (wrappers already unwrapped). */
function readContent(content: proto.IMessage): { text: string; kind: 'text' | MediaKind | 'sticker' } | null {
  if (typeof content.conversation === 'string') return { text: content.conversation, kind: 'text' }
  if (content.extendedTextMessage) return { text: content.extendedTextMessage.text ?? '', kind: 'text' }
  if (content.imageMessage) return { text: content.imageMessage.caption ?? '', kind: 'image' }
  if (content.videoMessage) return { text: content.videoMessage.caption ?? '', kind: 'video' }
  if (content.documentMessage) return { text: content.documentMessage.caption ?? '', kind: 'document' }
  if (content.audioMessage) return { text: '', kind: content.audioMessage.ptt ? 'voice' : 'audio' }
  if (content.stickerMessage) return { text: '', kind: 'sticker' }
  return null
}

/** Which content field a message carries, for logs about what was skipped (never the content itself). */
function contentField(content: proto.IMessage | undefined): string {
  const keys = content ? Object.keys(content).filter((k) => k !== 'messageContextInfo') : []
  return keys[0] ?? 'none'
}

/**
 * An upserted message as the gateway's inbound message, or why it is not one. Both `notify` (live) and `append`
 * (the offline backlog after a reconnect) pass through here; the edge de-duplicates on `upstreamId`.
 */
export async function toInbound(msg: WAMessage, peers: PeerDirectory, nowMs: number): Promise<InboundResult> {
  const { key } = msg
  if (key.fromMe) return { ok: false, reason: 'own message' }
  if (!key.id) return { ok: false, reason: 'no message id' }
  // A person writing 1:1; groups, status broadcasts, newsletters and broadcast lists are not part of the gateway.
  const from = await peers.resolve(key.remoteJid, key.remoteJidAlt, msg.pushName)
  if (!from) return { ok: false, reason: 'not a 1:1 chat' }
  const content = normalizeMessageContent(msg.message)
  if (!content) return { ok: false, reason: 'no content (stub or undecryptable)' }
  const read = readContent(content)
  if (!read) return { ok: false, reason: `unsupported content ${contentField(content)}` }
  const seconds = toNumber(msg.messageTimestamp ?? 0)
  const replyTo = quotedIdOf(content)
  return {
    ok: true,
    kind: read.kind,
    message: {
      upstreamId: key.id,
      from,
      text: read.text,
      // The bytes are not a URL: the driver attaches them (media-download.ts) and the relay core stores them first.
      media: null,
      sentAt: seconds > 0 ? seconds * 1000 : nowMs,
      ...(replyTo ? { replyTo } : {}),
    },
  }
}

/** The id of the message a reply quotes: `contextInfo.stanzaId` of whichever content part carries it. */
function quotedIdOf(content: proto.IMessage): string | null {
  for (const part of Object.values(content)) {
    if (part && typeof part === 'object' && 'contextInfo' in part) {
      const info: proto.IContextInfo | null | undefined = part.contextInfo
      if (info?.stanzaId && info.quotedMessage) return info.stanzaId
    }
  }
  return null
}

/**
 * A person's reaction (a `reactionMessage` upsert: Baileys emits reactions as messages, and `messages.reaction` only
 * for the ones it stores) as the gateway's reaction, or null when the message is not one. `text` '' removes it.
 */
export async function toReaction(msg: WAMessage, peers: PeerDirectory, nowMs: number): Promise<InboundReaction | null> {
  if (msg.key.fromMe) return null
  const r = normalizeMessageContent(msg.message)?.reactionMessage
  if (!r?.key?.id) return null
  const from = await peers.resolve(msg.key.remoteJid, msg.key.remoteJidAlt, msg.pushName)
  if (!from) return null
  const at = toNumber(r.senderTimestampMs ?? 0)
  return { upstreamId: r.key.id, from, emoji: r.text ?? '', at: at > 0 ? at : nowMs }
}

function sendErrorText(code: number | null, restrictedText: string | null): string {
  if (code === SEND_ERROR_RESTRICTED) return 'alpha refused the message: this number is restricted from starting new chats (error 463)'
  if (code === null) return 'alpha refused the message'
  return `alpha refused the message (error ${code}${restrictedText ? `: ${restrictedText}` : ''})`
}

/**
 * A `messages.update` about one of our sends → a receipt (with alpha's error code for a refusal); everything else
 * (edits, server acks, reads of incoming messages by our other devices) → null.
 */
export function toReceipt(u: WAMessageUpdate): { receipt: Receipt; errorCode: number | null } | null {
  if (!u.key.fromMe || !u.key.id) return null
  const upstreamId = u.key.id
  switch (u.update.status) {
    case WAMessageStatus.DELIVERY_ACK:
      return { receipt: { upstreamId, status: 'delivered' }, errorCode: null }
    case WAMessageStatus.READ:
    case WAMessageStatus.PLAYED:
      return { receipt: { upstreamId, status: 'read' }, errorCode: null }
    case WAMessageStatus.ERROR: {
      const params: unknown = u.update.messageStubParameters
      const list: unknown[] = Array.isArray(params) ? params : []
      const code = Number(list[0])
      const errorCode = Number.isInteger(code) ? code : null
      const extra = typeof list[1] === 'string' ? list[1] : null
      return { receipt: { upstreamId, status: 'failed', error: sendErrorText(errorCode, extra), code: errorCode }, errorCode }
    }
    default:
      return null
  }
}

/** `Content-Type` without its parameters, lower case (`image/jpeg; charset=binary` → `image/jpeg`), or null. */
export function baseMimetype(contentType: string | null): string | null {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase()
  return type.length > 0 ? type : null
}

/** An Ogg or Opus content type whose `codecs` parameter, if any, names Opus. */
function isOpusInOgg(contentType: string): boolean {
  const type = baseMimetype(contentType)
  if (type !== 'audio/ogg' && type !== 'audio/opus') return false
  const codecs = /;\s*codecs\s*=\s*"?([^";]+)/i.exec(contentType)?.[1]
  return codecs === undefined || codecs.trim().toLowerCase() === 'opus'
}

/**
 * The media kind alpha should use for a content type; unknown types go as documents, which alpha accepts as-is.
 * Audio plays in alpha's apps only as Opus in Ogg (sent as a voice note); any other audio goes as a document rather
 * than as an audio message the recipient's phone cannot play.
 */
export function mediaKindFor(contentType: string | null): MediaKind {
  const type = baseMimetype(contentType) ?? ''
  // alpha shows JPEG and PNG as photos; WebP would become a sticker and GIF is re-encoded to video by the apps.
  if (type === 'image/jpeg' || type === 'image/png') return 'image'
  if (type === 'video/mp4' || type === 'video/3gpp') return 'video'
  if (contentType && isOpusInOgg(contentType)) return 'voice'
  return 'document'
}

export type FetchedMedia = { bytes: Buffer; contentType: string | null; fileName: string | null }

/**
 * The messages to send for one outbound message, in order: usually one. Audio carries no caption on alpha, so text
 * with an audio item goes first as its own message; the media message is the one whose id is reported.
 */
export function outboundContents(text: string, media: FetchedMedia | null): AnyMessageContent[] {
  const caption = text.length > 0 ? text : undefined
  if (!media) {
    if (!caption) throw new SendError('empty_message', 'the message has no text and no media')
    return [{ text }]
  }
  // Baileys writes the mimetype into the message as given; parameters (`; charset=…`) break playback on phones.
  const mimetype = baseMimetype(media.contentType) ?? undefined
  switch (mediaKindFor(media.contentType)) {
    case 'image':
      return [{ image: media.bytes, caption, mimetype }]
    case 'video':
      return [{ video: media.bytes, caption, mimetype }]
    case 'voice':
      return [...(caption ? [{ text: caption }] : []), { audio: media.bytes, ptt: true, mimetype: 'audio/ogg; codecs=opus' }]
    case 'audio':
    case 'document':
      return [
        {
          document: media.bytes,
          mimetype: mimetype ?? 'application/octet-stream',
          fileName: media.fileName ?? 'attachment',
          caption,
        },
      ]
  }
}

/**
 * The upstream id of the `part`-th message sent for a gateway message: derived, not random, so a retry of the same
 * send (after a timeout or a relay failover) reuses the id and the recipient's app shows one message, and receipts
 * map back without a lookup. Same shape as Baileys' own ids (`3EB0` + 18 upper-case hex digits).
 */
export function upstreamIdFor(messageId: string, part = 0): string {
  const hash = createHash('sha256').update(`${messageId}#${part}`).digest('hex')
  return `3EB0${hash.slice(0, 18).toUpperCase()}`
}
