/**
 * An outbound file as beta takes it: uploaded in parts (upload.SaveFilePart, or SaveBigFilePart past 10 MiB, in
 * GramJS's part sizes) under one file id, then named in messages.SendMedia as a photo when GramJS would send it as
 * one (its name's extension) or else as a document with GramJS's own attributes for its name and type. The driver
 * runs the parts itself rather than GramJS's uploadFile, which sleeps through any flood wait however long, inside
 * the call: a short wait on a part is slept and the part sent again (part-flood.ts), a long one is thrown to the
 * sender, which pauses the account visibly; the upload remembers which parts beta has, so it then goes on from the
 * first one missing instead of from zero.
 */
import bigInt from 'big-integer'
import { Api, utils } from 'telegram'
import { CustomFile } from 'telegram/client/uploads'
import { generateRandomBytes, readBigIntFromBuffer } from 'telegram/Helpers'
import { floodBudget } from './part-flood'
import type { BetaClient } from './socket'

/** Files past this go as "big" files (GramJS's LARGE_FILE_THRESHOLD). */
export const BIG_FILE_BYTES = 10 * 1024 * 1024

export type OutboundFile = { name: string; bytes: Buffer; contentType: string | null }

export type Upload = {
  /** Uploads the parts beta does not have yet, in order; throws what beta answered for the part that failed. */
  sendParts(client: BetaClient): Promise<void>
  /** The uploaded file as the media of messages.SendMedia (call after sendParts). */
  media(): Api.TypeInputMedia
  /** beta lost the parts (FILE_PARTS_INVALID, FILE_PART_n_MISSING after a long pause): upload again under a new id. */
  restart(): void
}

export function startUpload(file: OutboundFile): Upload {
  const size = file.bytes.length
  const partBytes = utils.getAppropriatedPartSize(bigInt(size)) * 1024
  const parts = Math.max(1, Math.ceil(size / partBytes))
  const big = size > BIG_FILE_BYTES
  const newId = () => readBigIntFromBuffer(generateRandomBytes(8), true, true)
  let fileId = newId()
  const budget = floodBudget()
  let done = 0

  function part(i: number): Api.AnyRequest {
    const bytes = file.bytes.subarray(i * partBytes, (i + 1) * partBytes)
    return big
      ? new Api.upload.SaveBigFilePart({ fileId, filePart: i, fileTotalParts: parts, bytes })
      : new Api.upload.SaveFilePart({ fileId, filePart: i, bytes })
  }

  return {
    async sendParts(client) {
      while (done < parts) {
        const stored = await budget.part(() => client.invoke(part(done)))
        if (stored !== true) throw new Error(`beta: part ${done} of the upload was not stored`)
        done += 1
      }
    },
    media() {
      const input = big
        ? new Api.InputFileBig({ id: fileId, parts, name: file.name })
        : new Api.InputFile({ id: fileId, parts, name: file.name, md5Checksum: '' })
      if (utils.isImage(file.name)) return new Api.InputMediaUploadedPhoto({ file: input })
      const { attrs, mimeType } = utils.getAttributes(new CustomFile(file.name, size, '', file.bytes), { mimeType: file.contentType ?? undefined })
      return new Api.InputMediaUploadedDocument({ file: input, mimeType, attributes: attrs })
    },
    restart() {
      fileId = newId()
      done = 0
    },
  }
}
