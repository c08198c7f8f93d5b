/**
 * The relay's media upload (PUT /relay/media/{sid}/{upstreamId}, docs/ARCHITECTURE.md "Media ingest"): the body is
 * streamed into the bucket with its declared length, never buffered. R2 makes an object visible only once its upload
 * completed, and the row is written after, so a relay killed mid-upload leaves nothing behind; a repeated upload of
 * the same message writes the same key and row again. An item over the cap is not read at all: its row says why.
 */
import { z } from 'zod'
import { MEDIA_KINDS } from '../../schema/d1'
import type { Db } from '../db/client'
import { upsertMedia, type MediaRow } from '../db/media'
import { ApiError } from '../errors'
import { mediaIdFor, mediaKey } from './ids'

export const UPLOAD_HEADERS = {
  fence: 'x-media-fence',
  kind: 'x-media-kind',
  fileName: 'x-media-file-name',
  /** The item's full size as the upstream declared it; an item over the cap is reported with an empty body. */
  size: 'x-media-size',
  /** Set (to its cap) by a relay that did not download the item because it is over the relay's own cap. */
  overCap: 'x-media-over-cap',
} as const

const UploadMeta = z.object({
  kind: z.enum(MEDIA_KINDS),
  contentType: z.string().min(1).max(200),
  size: z.coerce.number().int().min(0),
  fileName: z.string().max(512).nullable(),
})

export type UploadResult = { media_id: string; status: 'stored' | 'too_large'; reason: string | null; size: number }

function header(h: Headers, name: string): string | null {
  return h.get(name)
}

export async function storeUpload(
  bucket: R2Bucket,
  db: Db,
  scope: { tenantId: string; accountId: string },
  upstreamId: string,
  request: Request,
  maxBytes: number,
  now: number
): Promise<UploadResult> {
  const h = request.headers
  const rawName = header(h, UPLOAD_HEADERS.fileName)
  let fileName: string | null = null
  try {
    fileName = rawName ? decodeURIComponent(rawName) : null
  } catch {
    throw new ApiError(400, 'invalid_request', `${UPLOAD_HEADERS.fileName} must be URI-encoded`)
  }
  const meta = UploadMeta.safeParse({
    kind: header(h, UPLOAD_HEADERS.kind),
    contentType: header(h, 'content-type') ?? 'application/octet-stream',
    size: header(h, UPLOAD_HEADERS.size) ?? header(h, 'content-length'),
    fileName,
  })
  if (!meta.success)
    throw new ApiError(400, 'invalid_request', `upload headers: ${meta.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`)
  const id = await mediaIdFor(scope.tenantId, scope.accountId, upstreamId)
  const row: MediaRow = { id, ...scope, ...meta.data, status: 'stored', reason: null, createdAt: now }
  const relayCap = Number(header(h, UPLOAD_HEADERS.overCap))
  const cap = Number.isInteger(relayCap) && relayCap > 0 && relayCap < maxBytes ? relayCap : maxBytes
  if (meta.data.size > cap) {
    await request.body?.cancel().catch(() => undefined)
    const reason = `the item is ${meta.data.size} bytes, over the ${cap}-byte cap (${cap === maxBytes ? 'MEDIA_MAX_BYTES' : "the relay's RELAY_MEDIA_MAX_BYTES"})`
    await upsertMedia(db, { ...row, status: 'too_large', reason })
    return { media_id: id, status: 'too_large', reason, size: meta.data.size }
  }
  const length = Number(header(h, 'content-length'))
  if (!request.body || !Number.isInteger(length) || length !== meta.data.size) {
    throw new ApiError(411, 'length_required', 'send the whole item with a Content-Length equal to x-media-size')
  }
  // A stream of known length is written as it arrives; a body cut short fails the put and nothing becomes visible.
  await bucket.put(mediaKey(scope.tenantId, scope.accountId, id), request.body, { httpMetadata: { contentType: meta.data.contentType } })
  await upsertMedia(db, row)
  return { media_id: id, status: 'stored', reason: null, size: meta.data.size }
}
