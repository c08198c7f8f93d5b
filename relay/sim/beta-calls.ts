/**
 * GramJS conveniences built from beta's own requests, for clients that are not a TelegramClient: the download the
 * driver asks of its client (downloadMedia: upload.GetFile parts from an offset, pulled one at a time, so a large
 * item is never held whole in memory), for the simulator's client (beta-client.ts) and the driver's unit-test fake;
 * and sendMessage / sendFile (messages.SendMessage; upload.SaveFilePart parts then messages.SendMedia), which the
 * simulator's own tests call.
 */
import { randomBytes } from 'node:crypto'
import bigInt from 'big-integer'
import { Api } from 'telegram'
import type { CustomFile } from 'telegram/client/uploads'
import { contentTypeFromName } from '../../common/media'
import { DOWNLOAD_PART_BYTES, type FileSource } from '../beta/socket'

export type Invoke = (request: Api.AnyRequest, ref: string | null) => Promise<unknown>

/** beta's part sizes: 512 KiB parts, and files over 10 MB uploaded as "big" files. */
export const PART_BYTES = 512 * 1024
const BIG_FILE_BYTES = 10 * 1024 * 1024

const randomLong = () => bigInt(randomBytes(8).readBigInt64BE(0).toString())

/** The content type GramJS would give a file by its name (mime lookup), or a generic one. */
export function typeByName(name: string): string {
  return contentTypeFromName(name) ?? 'application/octet-stream'
}

/** The sent message in a send's answer, as GramJS's _getResponseMessage finds it. */
function sentMessage(result: unknown, peer: Api.InputPeerUser, text: string): Api.Message {
  if (result instanceof Api.UpdateShortSentMessage)
    return new Api.Message({
      id: result.id,
      peerId: new Api.PeerUser({ userId: peer.userId }),
      date: result.date,
      message: text,
      out: true,
      media: result.media,
    })
  if (result instanceof Api.Updates || result instanceof Api.UpdatesCombined) {
    for (const u of result.updates) if (u instanceof Api.UpdateNewMessage && u.message instanceof Api.Message) return u.message
  }
  throw new Error('beta: the send was answered without the sent message')
}

export async function sendText(invoke: Invoke, peer: Api.InputPeerUser, text: string, ref: string | null): Promise<Api.Message> {
  const result = await invoke(new Api.messages.SendMessage({ peer, message: text, randomId: randomLong(), noWebpage: true }), ref)
  return sentMessage(result, peer, text)
}

export async function sendUpload(invoke: Invoke, peer: Api.InputPeerUser, file: CustomFile, caption: string, ref: string | null): Promise<Api.Message> {
  const bytes = file.buffer
  // Bytes only: a path would be opened, and beta would fetch a URL itself.
  if (!bytes || file.path) throw new Error('beta: uploads are CustomFile buffers only')
  const fileId = randomLong()
  const big = bytes.length > BIG_FILE_BYTES
  const parts = Math.max(1, Math.ceil(bytes.length / PART_BYTES))
  for (let i = 0; i < parts; i++) {
    const part = bytes.subarray(i * PART_BYTES, (i + 1) * PART_BYTES)
    await invoke(
      big
        ? new Api.upload.SaveBigFilePart({ fileId, filePart: i, fileTotalParts: parts, bytes: part })
        : new Api.upload.SaveFilePart({ fileId, filePart: i, bytes: part }),
      null
    )
  }
  const input = big ? new Api.InputFileBig({ id: fileId, parts, name: file.name }) : new Api.InputFile({ id: fileId, parts, name: file.name, md5Checksum: '' })
  const media = new Api.InputMediaUploadedDocument({
    file: input,
    mimeType: typeByName(file.name),
    attributes: [new Api.DocumentAttributeFilename({ fileName: file.name })],
  })
  const result = await invoke(new Api.messages.SendMedia({ peer, media, message: caption, randomId: randomLong() }), ref)
  return sentMessage(result, peer, caption)
}

/** A file from byte `offset` on, one upload.GetFile part per step (the consumer's pace sets the download's). */
export async function* downloadParts(invoke: Invoke, source: FileSource, offset: number): AsyncGenerator<Buffer> {
  for (let at = offset; ; at += DOWNLOAD_PART_BYTES) {
    const part = await invoke(new Api.upload.GetFile({ location: source.location, offset: bigInt(at), limit: DOWNLOAD_PART_BYTES, precise: false }), null)
    if (!(part instanceof Api.upload.File)) throw new Error('beta: upload.GetFile answered no file part')
    if (part.bytes.length > 0) yield Buffer.from(part.bytes)
    if (part.bytes.length < DOWNLOAD_PART_BYTES) return
  }
}

/** As GramJS's update loop hands updates to a Raw handler: containers opened, each update with the container's users as `_entities`. */
export function dispatchUpdates(updates: Api.TypeUpdates, emit: (update: unknown) => void): void {
  if (updates instanceof Api.Updates || updates instanceof Api.UpdatesCombined) {
    const entities = new Map<string, Api.TypeUser>()
    for (const u of updates.users) if (u instanceof Api.User) entities.set(u.id.toString(), u)
    for (const u of updates.updates) {
      Reflect.set(u, '_entities', entities)
      emit(u)
    }
    return
  }
  emit(updates instanceof Api.UpdateShort ? updates.update : updates)
}
