/**
 * Inbound alpha media as an attachment the relay core stores in the gateway (relay/link/media-upload.ts). The bytes
 * are downloaded and decrypted by Baileys' own helper, as a stream; when alpha's servers no longer have the file (the
 * URL expired, a 404/410: a backlog, a forwarded file), the sender's phone is asked to upload it again and the
 * download is retried once.
 */
import { downloadMediaMessage, normalizeMessageContent, toNumber } from '@whiskeysockets/baileys'
import type { WAMessage } from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import type { InboundAttachment, MediaKind } from '../connector'
import { FALLBACK_TYPES } from '../media-kind'
import { errText, withTimeout } from './send'
import type { AlphaSocket } from './socket'
import { closeInfo } from './state'

/** Media server answers that mean the file is gone and the sender's phone must upload it again (Baileys' own list). */
export const REUPLOAD_STATUSES: readonly number[] = [404, 410]
/** Baileys waits for the phone's answer to a re-upload request with no deadline of its own (bindWaitForEvent). */
export const REUPLOAD_TIMEOUT_MS = 60_000

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

/**
 * Whether a failed download asks for a re-upload. Baileys' own `reuploadRequest` path reads `error.status`, but the
 * error its download throws is a Boom with the HTTP status in `output.statusCode` (Utils/messages.js
 * `downloadMediaMessage`, messages-media.js `getHttpStream`), so that path never runs: both shapes are read here.
 */
export function needsReupload(err: unknown): boolean {
  const status = typeof err === 'object' && err !== null && 'status' in err ? err.status : null
  const code = closeInfo(err).statusCode ?? (typeof status === 'number' ? status : null)
  return code !== null && REUPLOAD_STATUSES.includes(code)
}

/**
 * The decrypted media of a message; a file gone from alpha's servers is uploaded again by the sender's phone through
 * the socket open now (`updateMediaMessage` points the message at the new file) and downloaded once more.
 */
async function download(msg: WAMessage, socket: () => AlphaSocket | null, log: Logger): Promise<NodeJS.ReadableStream> {
  try {
    return await downloadMediaMessage(msg, 'stream', {})
  } catch (err) {
    if (!needsReupload(err)) throw err
    const sock = socket()
    if (!sock) throw new Error(`the media is gone from alpha's servers and no connection is open to ask for it again (${errText(err)})`)
    log.info({ upstream_id: msg.key.id, status: closeInfo(err).statusCode }, 'alpha: media expired; asking the sender to upload it again')
    const fresh = await withTimeout(sock.updateMediaMessage(msg), REUPLOAD_TIMEOUT_MS, () => new Error('the sender did not upload the media again in time'))
    return downloadMediaMessage(fresh, 'stream', {})
  }
}

export function alphaAttachment(msg: WAMessage, socket: () => AlphaSocket | null, log: Logger): InboundAttachment | null {
  const item = mediaItem(msg)
  if (!item) return null
  const declared = item.fileLength === null || item.fileLength === undefined ? null : toNumber(item.fileLength as number)
  return {
    kind: item.kind,
    contentType: item.mimetype || FALLBACK_TYPES[item.kind],
    fileName: item.fileName,
    declaredSize: declared !== null && Number.isFinite(declared) && declared > 0 ? declared : null,
    open: () => download(msg, socket, log),
  }
}
