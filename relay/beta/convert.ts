/**
 * beta updates into the relay's types, one direction per function: a private incoming message into an
 * InboundMessage (sender's phone when visible, names, username, and the peer id with its access hash), read-outbox
 * updates into read receipts for the messages we sent, a send's answer into the id of the message it made, and an
 * outbound file's name and type into what beta is sent.
 */
import type bigInt from 'big-integer'
import { Api } from 'telegram'
import { extensionFromContentType } from '../../common/media'
import type { InboundAttachment, InboundMessage, InboundReaction, Peer } from '../connector'

/** A caption-less message with media the gateway does not store (a location, a contact) still reaches the agent, named by its kind. */
function mediaLabel(media: Api.TypeMessageMedia | undefined): string | null {
  if (!media || media instanceof Api.MessageMediaEmpty) return null
  if (media instanceof Api.MessageMediaPhoto) return '[photo]'
  if (media instanceof Api.MessageMediaDocument) return '[document]'
  if (media instanceof Api.MessageMediaGeo) return '[location]'
  if (media instanceof Api.MessageMediaContact) return '[contact]'
  return '[media]'
}

/** The sender's user id of a private incoming message, or null for anything else (groups, channels, our own). */
export function privateSenderId(message: Api.TypeMessage): string | null {
  if (!(message instanceof Api.Message) || message.out) return null
  if (!(message.peerId instanceof Api.PeerUser)) return null
  return message.peerId.userId.toString()
}

/** `attachment`: the message's photo or document (media-download.ts), stored by the relay core before the message goes on. */
export function toInbound(message: Api.Message, from: Peer, attachment: InboundAttachment | null = null): InboundMessage {
  const caption = message.message && message.message.length > 0 ? message.message : null
  const text = caption ?? (attachment ? '' : (mediaLabel(message.media) ?? ''))
  const replyTo = replyToOf(message.replyTo)
  return {
    upstreamId: String(message.id),
    from,
    text,
    media: null,
    ...(attachment ? { attachment } : {}),
    sentAt: message.date * 1000,
    ...(replyTo ? { replyTo } : {}),
  }
}

/** The id of the message a reply quotes (MessageReplyHeader.replyToMsgId), when it is a reply in the same chat. */
function replyToOf(header: Api.TypeMessageReplyHeader | undefined): string | null {
  if (!(header instanceof Api.MessageReplyHeader) || header.replyToMsgId === undefined || header.replyToPeerId) return null
  return String(header.replyToMsgId)
}

/**
 * A person's reaction in a private chat (UpdateMessageReactions, which carries the message's reactions as they now
 * are): theirs from `recentReactions`, or '' when they have none left (they removed it). Null when the update is not
 * about a private chat.
 */
export function toReaction(update: Api.UpdateMessageReactions, from: Peer, nowMs: number): InboundReaction | null {
  if (!(update.peer instanceof Api.PeerUser)) return null
  const userId = update.peer.userId.toString()
  const theirs = (update.reactions.recentReactions ?? []).find((r) => r.peerId instanceof Api.PeerUser && r.peerId.userId.toString() === userId)
  const emoji = theirs?.reaction instanceof Api.ReactionEmoji ? theirs.reaction.emoticon : ''
  return { upstreamId: String(update.msgId), from, emoji, at: theirs ? theirs.date * 1000 : nowMs }
}

/**
 * The id of the message a send made, from beta's answer: UpdateShortSentMessage for text, or Updates naming it by
 * our random_id (UpdateMessageID) for media; null when the answer carries neither.
 */
export function sentMessageId(answer: unknown, randomId: bigInt.BigInteger): number | null {
  if (answer instanceof Api.UpdateShortSentMessage) return answer.id
  if (!(answer instanceof Api.Updates || answer instanceof Api.UpdatesCombined)) return null
  for (const u of answer.updates) if (u instanceof Api.UpdateMessageID && u.randomId?.equals(randomId)) return u.id
  for (const u of answer.updates) if (u instanceof Api.UpdateNewMessage) return u.message.id
  return null
}

/** A content type without its parameters (`application/pdf; charset=binary` → `application/pdf`), or null. */
export function bareContentType(contentType: string | null): string | null {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase() || null
}

/**
 * The name an outbound file goes to beta by, which also decides how it is shown (GramJS sends .jpg/.png as photos and
 * types a document by its name): the fetched name (Content-Disposition, else the URL's last segment) when it has an
 * extension; else that name, or `attachment`, with the content type's extension; else the name as it is, or
 * `attachment.bin` for bytes nothing describes.
 */
export function outboundFileName(fileName: string | null, contentType: string | null): string {
  const name = fileName?.trim() || null
  if (name && /\.[A-Za-z0-9]{1,8}$/.test(name)) return name
  const ext = extensionFromContentType(contentType)
  if (ext) return `${name ?? 'attachment'}.${ext}`
  return name ?? 'attachment.bin'
}

/** An UpdateShortMessage is a private text message in short form (no users attached). */
export function shortToInbound(update: Api.UpdateShortMessage, from: Peer): InboundMessage {
  const replyTo = replyToOf(update.replyTo)
  return { upstreamId: String(update.id), from, text: update.message, media: null, sentAt: update.date * 1000, ...(replyTo ? { replyTo } : {}) }
}
