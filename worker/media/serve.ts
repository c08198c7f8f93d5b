/**
 * Answers a media request from the bucket: the whole object, or one byte range (RFC 9110 `Range: bytes=a-b`, `a-`,
 * `-n`) as 206 with Content-Range; an unsatisfiable range is 416. Only single ranges: players ask for one at a time.
 *
 * The bytes are a stranger's (anyone can send the account a file), served from the gateway's own origin, which also
 * serves the approval, connect and login pages. So a browser may show inline only types that cannot run anything
 * (raster images, audio, video); every other type (HTML, SVG, XML, PDF, scripts, unknown) is an attachment, and
 * every answer carries `nosniff` and a CSP that forbids every load and sandboxes the document (docs/security.md).
 */
import type { MediaRow } from '../db/media'
import { mediaKey } from './ids'

export type ByteRange = { offset: number; length: number }

/** The one range a `Range` header asks for, null for the whole object, 'unsatisfiable' when it lies outside. */
export function parseRange(header: string | null | undefined, size: number): ByteRange | null | 'unsatisfiable' {
  if (!header) return null
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  // Multiple ranges or other units: ignored, the whole object is sent (allowed by RFC 9110 14.2).
  if (!m || (m[1] === '' && m[2] === '')) return null
  if (m[1] === '') {
    const suffix = Number(m[2])
    if (suffix === 0) return 'unsatisfiable'
    const length = Math.min(suffix, size)
    return { offset: size - length, length }
  }
  const start = Number(m[1])
  if (start >= size) return 'unsatisfiable'
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)
  if (end < start) return 'unsatisfiable'
  return { offset: start, length: end - start + 1 }
}

/**
 * Types a browser renders without running script: raster images, audio and video (it shows them in its own viewer
 * or player). Not SVG (it runs script), not HTML, XML or PDF (a document with its own scripting), nothing unknown.
 */
const INLINE_TYPES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
  'image/heic',
  'image/heif',
  'audio/aac',
  'audio/amr',
  'audio/flac',
  'audio/mp4',
  'audio/mpeg',
  'audio/ogg',
  'audio/opus',
  'audio/wav',
  'audio/webm',
  'audio/x-wav',
  'audio/3gpp',
  'video/3gpp',
  'video/mp4',
  'video/mpeg',
  'video/ogg',
  'video/quicktime',
  'video/webm',
])

/** No load of any kind and a sandbox without scripts: even a document a browser chose to render runs nothing. */
export const MEDIA_CSP = "default-src 'none'; sandbox"

export function servedInline(contentType: string): boolean {
  return INLINE_TYPES.has(contentType.split(';')[0]!.trim().toLowerCase())
}

function disposition(row: MediaRow): string {
  const name = row.fileName ?? row.id
  return `${servedInline(row.contentType) ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(name)}`
}

/** Streams the object (never buffered); null when it is not in the bucket (retention or removal got there first). */
export async function serveMedia(bucket: R2Bucket, row: MediaRow, rangeHeader: string | null | undefined): Promise<Response | null> {
  const range = parseRange(rangeHeader, row.size)
  const base = {
    'Content-Type': row.contentType,
    'Accept-Ranges': 'bytes',
    'Content-Disposition': disposition(row),
    'Cache-Control': 'private, max-age=300',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': MEDIA_CSP,
  }
  if (range === 'unsatisfiable') return new Response(null, { status: 416, headers: { ...base, 'Content-Range': `bytes */${row.size}` } })
  const obj = await bucket.get(mediaKey(row.tenantId, row.accountId, row.id), range ? { range } : undefined)
  if (!obj) return null
  if (!range) return new Response(obj.body, { status: 200, headers: { ...base, 'Content-Length': String(obj.size) } })
  return new Response(obj.body, {
    status: 206,
    headers: { ...base, 'Content-Length': String(range.length), 'Content-Range': `bytes ${range.offset}-${range.offset + range.length - 1}/${obj.size}` },
  })
}
