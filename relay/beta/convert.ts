/**
 * beta updates into the relay's types, one direction per function: a private incoming message into an
 * InboundMessage (sender's phone when visible, names, username, and the peer id with its access hash), read-outbox
 * updates into read receipts for the messages we sent.
 */
import { Api } from 'telegram'
import type { InboundMessage, Peer } from '../connector'

/** A caption-less media message still reaches the agent, named by its kind (one media item via the media store: TODO). */
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

export function toInbound(message: Api.Message, from: Peer): InboundMessage {
  const text = message.message && message.message.length > 0 ? message.message : (mediaLabel(message.media) ?? '')
  return { upstreamId: String(message.id), from, text, media: null, sentAt: message.date * 1000 }
}

/** An UpdateShortMessage is a private text message in short form (no users attached). */
export function shortToInbound(update: Api.UpdateShortMessage, from: Peer): InboundMessage {
  return { upstreamId: String(update.id), from, text: update.message, media: null, sentAt: update.date * 1000 }
}
