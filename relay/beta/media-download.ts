/**
 * Inbound beta media as an attachment the relay core stores in the gateway (relay/link/media-upload.ts spools it to
 * disk and uploads it, idempotently): the message's photo or document (voice note, audio, video, sticker, file),
 * its kind from the document's attributes, and the bytes from GramJS's downloadMedia as a stream, fetched again on a
 * retry. Contacts, locations and web previews carry no file and stay text.
 */
import { Api } from 'telegram'
import type { InboundAttachment, MediaKind } from '../connector'
import type { BetaClient } from './socket'
import { FALLBACK_TYPES } from '../media-kind'

type Item = { kind: MediaKind; contentType: string; fileName: string | null; size: number | null }

function photoItem(photo: Api.Photo): Item {
  const sizes = photo.sizes.map((s) => (s instanceof Api.PhotoSize ? s.size : s instanceof Api.PhotoSizeProgressive ? Math.max(...s.sizes) : 0))
  const largest = Math.max(0, ...sizes)
  return { kind: 'image', contentType: 'image/jpeg', fileName: null, size: largest > 0 ? largest : null }
}

function documentItem(doc: Api.Document): Item {
  let kind: MediaKind = 'document'
  let fileName: string | null = null
  for (const a of doc.attributes) {
    if (a instanceof Api.DocumentAttributeAudio) kind = a.voice ? 'voice_note' : 'audio'
    else if (a instanceof Api.DocumentAttributeVideo && kind === 'document') kind = 'video'
    else if (a instanceof Api.DocumentAttributeSticker) kind = 'sticker'
    else if (a instanceof Api.DocumentAttributeFilename) fileName = a.fileName
  }
  const size = Number(doc.size.toString())
  return { kind, contentType: doc.mimeType || FALLBACK_TYPES[kind], fileName, size: Number.isFinite(size) && size > 0 ? size : null }
}

/** The one media item of a message, or null when it has none the gateway stores. */
export function betaMediaItem(message: Api.Message): Item | null {
  const media = message.media
  if (media instanceof Api.MessageMediaPhoto && media.photo instanceof Api.Photo) return photoItem(media.photo)
  if (media instanceof Api.MessageMediaDocument && media.document instanceof Api.Document) return documentItem(media.document)
  return null
}

export function betaAttachment(message: Api.Message, client: () => BetaClient | null): InboundAttachment | null {
  const item = betaMediaItem(message)
  if (!item) return null
  return {
    kind: item.kind,
    contentType: item.contentType,
    fileName: item.fileName,
    declaredSize: item.size,
    open: () => {
      const c = client()
      if (!c) return Promise.reject(new Error('beta: the session closed before the media was downloaded'))
      return c.downloadMedia(message)
    },
  }
}
