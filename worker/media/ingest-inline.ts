/**
 * Stores one inbound attachment a provider hands us inline (the phone's `mms:downloaded` webhook carries each file
 * base64-encoded): nothing to fetch, so only the storing half of ingest-url.ts, under the same id, key, row, type and
 * size-cap rules.
 */
import type { MediaKind } from '../../schema/d1'
import type { Db } from '../db/client'
import { getMedia, upsertMedia, type MediaRow } from '../db/media'
import { mediaIdFor, mediaKey } from './ids'
import { kindOf, mediaContentType, tooLargeReason } from './ingest-url'

export type InlineMedia = {
  bytes: Uint8Array
  /** The provider's word on the type; there is no answer header to prefer over it. */
  contentType: string | null
  fileName: string | null
  kind: MediaKind | null
}

export type InlineDeps = { bucket: R2Bucket; db: Db; maxBytes: number; now: number }

/**
 * Stores the attachment of message `upstreamId` (its id derives from it, so a re-delivered webhook finds the first
 * delivery's item and writes nothing). Over the cap: a `too_large` row with the reason and no bytes.
 */
export async function ingestMediaBytes(
  deps: InlineDeps,
  scope: { tenantId: string; accountId: string },
  upstreamId: string,
  source: InlineMedia
): Promise<{ status: 'stored' | 'too_large'; row: MediaRow }> {
  const id = await mediaIdFor(scope.tenantId, scope.accountId, upstreamId)
  const known = await getMedia(deps.db, id)
  if (known && (known.status === 'stored' || known.status === 'too_large')) return { status: known.status, row: known }
  const contentType = mediaContentType(null, source.contentType)
  const size = source.bytes.byteLength
  const row: MediaRow = {
    id,
    ...scope,
    kind: kindOf(contentType, source.kind),
    contentType,
    size,
    fileName: source.fileName,
    status: 'stored',
    reason: null,
    createdAt: deps.now,
  }
  if (size > deps.maxBytes) {
    const over = { ...row, status: 'too_large' as const, reason: tooLargeReason(size, deps.maxBytes, true) }
    await upsertMedia(deps.db, over)
    return { status: 'too_large', row: over }
  }
  await deps.bucket.put(mediaKey(scope.tenantId, scope.accountId, id), source.bytes, { httpMetadata: { contentType } })
  await upsertMedia(deps.db, row)
  return { status: 'stored', row }
}
