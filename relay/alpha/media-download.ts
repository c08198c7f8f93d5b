/**
 * Inbound alpha media as an attachment the relay core stores in the gateway (relay/link/media-upload.ts). The bytes
 * are downloaded and decrypted by Baileys' own helper, as a stream; when alpha's servers no longer have the file (the
 * URL expired, a 404/410), the helper asks the sender's phone to upload it again (`reuploadRequest`) and retries.
 */
import { downloadMediaMessage, normalizeMessageContent, toNumber } from '@whiskeysockets/baileys'
import type { WAMessage, WASocket } from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import type { InboundAttachment, MediaKind } from '../connector'
import { FALLBACK_TYPES } from '../media-kind'

type Item = { kind: MediaKind; mimetype: string | null | undefined; fileName: string | null; fileLength: unknown }

/** The media part of a message, if it has one; its kind as the gateway names it. */
function mediaItem(msg: WAMessage): Item | null {
  const c = normalizeMessageContent(msg.message)
  if (!c) return null
  if (c.imageMessage) return { kind: 'image', mimetype: c.imageMessage.mimetype, fileName: null, fileLength: c.imageMessage.fileLength }
  if (c.videoMessage) return { kind: 'video', mimetype: c.videoMessage.mimetype, fileName: null, fileLength: c.videoMessage.fileLength }
  if (c.audioMessage)
    return { kind: c.audioMessage.ptt ? 'voice_note' : 'audio', mimetype: c.audioMessage.mimetype, fileName: null, fileLength: c.audioMessage.fileLength }
  if (c.documentMessage)
    return { kind: 'document', mimetype: c.documentMessage.mimetype, fileName: c.documentMessage.fileName ?? null, fileLength: c.documentMessage.fileLength }
  if (c.stickerMessage) return { kind: 'sticker', mimetype: c.stickerMessage.mimetype, fileName: null, fileLength: c.stickerMessage.fileLength }
  return null
}

export function alphaAttachment(msg: WAMessage, sock: { updateMediaMessage?: WASocket['updateMediaMessage'] }, log: Logger): InboundAttachment | null {
  const item = mediaItem(msg)
  if (!item) return null
  const declared = item.fileLength === null || item.fileLength === undefined ? null : toNumber(item.fileLength as number)
  return {
    kind: item.kind,
    contentType: item.mimetype || FALLBACK_TYPES[item.kind],
    fileName: item.fileName,
    declaredSize: declared !== null && Number.isFinite(declared) && declared > 0 ? declared : null,
    open: () =>
      downloadMediaMessage(
        msg,
        'stream',
        {},
        {
          logger: log,
          reuploadRequest: (m) => (sock.updateMediaMessage ? sock.updateMediaMessage(m) : Promise.reject(new Error('this socket cannot request a re-upload'))),
        }
      ),
  }
}
