/**
 * Inbound beta media as an attachment the relay core stores in the gateway (relay/link/media-upload.ts spools it to
 * disk and uploads it, idempotently): the message's photo or document (voice note, audio, video, sticker, file),
 * its kind from the document's attributes, and the bytes as a stream of upload.GetFile parts, fetched again on a
 * retry. A short flood wait on a part (beta throttles downloads with FLOOD_PREMIUM_WAIT) is slept and the download
 * goes on from the byte it reached (part-flood.ts); a long one fails the stream, never ends it short. Contacts,
 * locations and web previews carry no file and stay text.
 */
import { Readable } from 'node:stream'
import { Api } from 'telegram'
import type { InboundAttachment, MediaKind } from '../connector'
import { floodBudget } from './part-flood'
import type { BetaClient, FileSource } from './socket'
import { FALLBACK_TYPES } from '../media-kind'

type Item = { kind: MediaKind; contentType: string; fileName: string | null; size: number | null }

/** The photo's largest size beta stores as a file (cached and stripped thumbnails are not downloads). */
function largestSize(photo: Api.Photo): { type: string; size: number } | null {
  let best: { type: string; size: number } | null = null
  for (const s of photo.sizes) {
    const size = s instanceof Api.PhotoSize ? s.size : s instanceof Api.PhotoSizeProgressive ? Math.max(0, ...s.sizes) : -1
    if (size >= 0 && 'type' in s && (!best || size > best.size)) best = { type: s.type, size }
  }
  return best
}

function photoItem(photo: Api.Photo): Item {
  const largest = largestSize(photo)?.size ?? 0
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

/**
 * Where the item is fetched from, as GramJS's downloadMedia picks it: a photo's largest size on the photo's data
 * center, a document itself (on the session's data center; GramJS follows FILE_MIGRATE).
 */
export function fileSource(message: Api.Message): FileSource | null {
  const media = message.media
  if (media instanceof Api.MessageMediaPhoto && media.photo instanceof Api.Photo) {
    const { id, accessHash, fileReference, dcId } = media.photo
    const largest = largestSize(media.photo)
    if (!largest) return null
    return { location: new Api.InputPhotoFileLocation({ id, accessHash, fileReference, thumbSize: largest.type }), dcId }
  }
  if (media instanceof Api.MessageMediaDocument && media.document instanceof Api.Document) {
    const { id, accessHash, fileReference } = media.document
    return { location: new Api.InputDocumentFileLocation({ id, accessHash, fileReference, thumbSize: '' }), dcId: undefined }
  }
  return null
}

/** The file's bytes as a stream, going on from the byte reached after a short flood wait. */
function download(client: () => BetaClient | null, source: FileSource): NodeJS.ReadableStream {
  const budget = floodBudget()
  async function* parts(): AsyncGenerator<Buffer> {
    let offset = 0
    for (;;) {
      const c = client()
      if (!c) throw new Error('beta: the session closed before the media was downloaded')
      try {
        for await (const chunk of c.downloadMedia(source, offset)) {
          offset += chunk.length
          if (chunk.length > 0) yield chunk
        }
        return
      } catch (err) {
        await budget.waitOut(err)
      }
    }
  }
  return Readable.from(parts(), { objectMode: false })
}

export function betaAttachment(message: Api.Message, client: () => BetaClient | null): InboundAttachment | null {
  const item = betaMediaItem(message)
  const source = item ? fileSource(message) : null
  if (!item || !source) return null
  return {
    kind: item.kind,
    contentType: item.contentType,
    fileName: item.fileName,
    declaredSize: item.size,
    open: () => {
      if (!client()) return Promise.reject(new Error('beta: the session closed before the media was downloaded'))
      return Promise.resolve(download(client, source))
    },
  }
}
