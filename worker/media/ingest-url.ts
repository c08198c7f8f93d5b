/**
 * Fetches one inbound attachment a provider hands us by URL (Twilio's MediaUrlN, a Graph CDN link) into the media
 * store, under the same key layout and row as a relay upload (upload.ts): streamed, never buffered whole, with the
 * size cap, the SSRF guard on every hop, and an outcome that says whether trying again later can help.
 */
import { checkPublicUrl, type UrlPolicy } from '../../common/public-url'
import { fileNameFromUrl } from '../../common/media'
import type { MediaKind } from '../../schema/d1'
import type { Db } from '../db/client'
import { getMedia, upsertMedia, type MediaRow } from '../db/media'
import { eachChunkCapped } from '../lib/read-capped'
import { mediaIdFor, mediaKey } from './ids'

export type MediaSource = {
  url: string
  /** Sent to the URL's own origin only (Twilio's Basic auth), never to a redirect target on another origin. */
  headers?: Record<string, string>
  /** The provider's own word on the type (MediaContentTypeN, Graph's attachment type); the answer's header wins. */
  contentType: string | null
  fileName: string | null
  kind: MediaKind | null
}

export type IngestDeps = {
  bucket: R2Bucket
  db: Db
  policy: UrlPolicy
  maxBytes: number
  now: number
  /** For the whole transfer, headers and body. */
  timeoutMs: number
}

export type IngestedMedia =
  | { status: 'stored' | 'too_large'; row: MediaRow }
  /** `retry`: the provider may answer next time (network, timeout, 408/429/5xx); otherwise it never will. */
  | { status: 'failed'; retry: boolean; reason: string }

/** Redirects followed (each hop checked by the guard again); Twilio's media URL answers one, to its storage. */
const MAX_REDIRECTS = 5
/**
 * An answer without Content-Length goes to R2 as a multipart upload in parts of this size (R2 wants equal parts of at
 * least 5 MiB but the last): memory holds one part, whatever the item's size.
 */
export const PART_BYTES = 8 * 1024 * 1024
const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*(\s*;.*)?$/i

/** The type to keep: the answer's header when it is a concrete type, else the provider's hint, else octet-stream. */
export function mediaContentType(header: string | null, hint: string | null): string {
  const usable = (t: string | null) => (t && t.length <= 200 && MIME.test(t.trim()) && !t.includes('*') ? t.trim() : null)
  const fromHeader = usable(header)
  if (fromHeader && fromHeader.split(';')[0]!.toLowerCase() !== 'application/octet-stream') return fromHeader
  return usable(hint) ?? fromHeader ?? 'application/octet-stream'
}

export function kindOf(contentType: string, hint: MediaKind | null): MediaKind {
  const major = contentType.split('/')[0]!.toLowerCase()
  if (major === 'image') return hint === 'sticker' ? 'sticker' : 'image'
  if (major === 'video') return 'video'
  if (major === 'audio') return hint === 'voice_note' ? 'voice_note' : 'audio'
  return hint && hint !== 'image' && hint !== 'video' && hint !== 'audio' ? hint : 'document'
}

function dispositionName(header: string | null): string | null {
  if (!header) return null
  const star = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(header)
  if (star) {
    try {
      return decodeURIComponent(star[1]!.trim()).slice(0, 512)
    } catch {
      // Not valid percent-encoding: fall through to the plain parameter.
    }
  }
  const plain = /filename\s*=\s*"?([^";]+)"?/i.exec(header)
  return plain ? plain[1]!.trim().slice(0, 512) : null
}

/** Why an item over the cap has no bytes (media.reason), the same words for every way media arrives. */
export function tooLargeReason(size: number, maxBytes: number, exact: boolean): string {
  return `the item is ${exact ? '' : 'more than '}${size} bytes, over the ${maxBytes}-byte cap (MEDIA_MAX_BYTES)`
}

const retryable = (status: number) => status === 408 || status === 429 || status >= 500

/** Follows redirects by hand so every hop passes the guard and credentials never leave the first origin. */
async function fetchGuarded(source: MediaSource, deps: IngestDeps, signal: AbortSignal): Promise<Response | IngestedMedia> {
  let url = source.url
  const origin = URL.canParse(url) ? new URL(url).origin : null
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const check = checkPublicUrl(url, deps.policy)
    if (!check.ok) return { status: 'failed', retry: false, reason: `the media URL was refused: ${check.reason}` }
    const headers = { 'Accept-Encoding': 'identity', ...(check.url.origin === origin ? source.headers : {}) }
    const res = await fetch(check.url, { headers, redirect: 'manual', signal })
    const location = res.headers.get('location')
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel().catch(() => undefined)
      url = new URL(location, check.url).toString()
      continue
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined)
      return { status: 'failed', retry: retryable(res.status), reason: `the provider answered HTTP ${res.status} for the media` }
    }
    return res
  }
  return { status: 'failed', retry: false, reason: `the media URL redirected more than ${MAX_REDIRECTS} times` }
}

/**
 * Stores the attachment of message `upstreamId` (the id is derived from it, as for relay uploads, so a second run for
 * the same message finds the first one's item and fetches nothing). Over the cap: a `too_large` row with the reason
 * and no bytes, never a dropped message.
 */
export async function ingestMediaUrl(
  deps: IngestDeps,
  scope: { tenantId: string; accountId: string },
  upstreamId: string,
  source: MediaSource
): Promise<IngestedMedia> {
  const id = await mediaIdFor(scope.tenantId, scope.accountId, upstreamId)
  const known = await getMedia(deps.db, id)
  if (known && (known.status === 'stored' || known.status === 'too_large')) return { status: known.status, row: known }
  const signal = AbortSignal.timeout(deps.timeoutMs)
  try {
    const res = await fetchGuarded(source, deps, signal)
    if (!(res instanceof Response)) return res
    const contentType = mediaContentType(res.headers.get('content-type'), source.contentType)
    const row: MediaRow = {
      id,
      ...scope,
      kind: kindOf(contentType, source.kind),
      contentType,
      size: 0,
      fileName: dispositionName(res.headers.get('content-disposition')) ?? source.fileName,
      status: 'stored',
      reason: null,
      createdAt: deps.now,
    }
    const tooLarge = async (size: number, exact: boolean) => {
      const stored = {
        ...row,
        size,
        status: 'too_large' as const,
        reason: tooLargeReason(size, deps.maxBytes, exact),
      }
      await upsertMedia(deps.db, stored)
      return { status: 'too_large' as const, row: stored }
    }
    const declared = res.headers.get('content-length')
    const length = declared !== null && /^\d+$/.test(declared) ? Number(declared) : null
    if (length !== null && length > deps.maxBytes) {
      await res.body?.cancel().catch(() => undefined)
      return tooLarge(length, true)
    }
    const key = mediaKey(scope.tenantId, scope.accountId, id)
    const httpMetadata = { contentType }
    let size: number
    if (length !== null && res.body) {
      // A stream of known length goes to R2 as it arrives; one that ends short or runs long fails the put.
      await deps.bucket.put(key, res.body.pipeThrough(new FixedLengthStream(length)), { httpMetadata })
      size = length
    } else {
      const streamed = await putUnknownLength(deps.bucket, key, res.body, deps.maxBytes, httpMetadata)
      if (streamed.over) return tooLarge(streamed.size, false)
      size = streamed.size
    }
    const stored = { ...row, size }
    await upsertMedia(deps.db, stored)
    return { status: 'stored', row: stored }
  } catch (err) {
    const name = err instanceof Error ? err.name : ''
    const why = name === 'TimeoutError' || name === 'AbortError' ? `took longer than ${deps.timeoutMs} ms` : err instanceof Error ? err.message : String(err)
    return { status: 'failed', retry: true, reason: `the media could not be fetched: ${why}` }
  }
}

/**
 * A body of unknown length (chunked): a single put when it fits one part, else a multipart upload, one part in
 * memory at a time. Past the cap the upload is aborted and nothing becomes visible.
 */
async function putUnknownLength(
  bucket: R2Bucket,
  key: string,
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  httpMetadata: R2HTTPMetadata
): Promise<{ over: boolean; size: number }> {
  let part = new Uint8Array(PART_BYTES)
  let filled = 0
  // Started by the first full part (inside the chunk callback, so held in an object the compiler follows).
  const multipart: { upload: R2MultipartUpload | null } = { upload: null }
  const parts: R2UploadedPart[] = []
  try {
    const { over, size } = await eachChunkCapped(body, maxBytes, async (value) => {
      let at = 0
      while (at < value.byteLength) {
        const n = Math.min(PART_BYTES - filled, value.byteLength - at)
        part.set(value.subarray(at, at + n), filled)
        filled += n
        at += n
        if (filled === PART_BYTES) {
          multipart.upload ??= await bucket.createMultipartUpload(key, { httpMetadata })
          parts.push(await multipart.upload.uploadPart(parts.length + 1, part))
          part = new Uint8Array(PART_BYTES)
          filled = 0
        }
      }
    })
    const { upload } = multipart
    if (over) {
      await upload?.abort().catch(() => undefined)
      return { over: true, size: maxBytes }
    }
    if (!upload) {
      await bucket.put(key, part.subarray(0, filled), { httpMetadata })
      return { over: false, size }
    }
    if (filled > 0) parts.push(await upload.uploadPart(parts.length + 1, part.subarray(0, filled)))
    await upload.complete(parts)
    return { over: false, size }
  } catch (err) {
    await multipart.upload?.abort().catch(() => undefined)
    throw err
  }
}

/** The file name a provider URL suggests, for documents (a Graph CDN link ends in the file's name; Twilio's does not). */
export function fileNameHint(url: string): string | null {
  const name = fileNameFromUrl(url)
  return name && /\.[a-z0-9]{1,8}$/i.test(name) ? name.slice(0, 512) : null
}
