/**
 * The media of a relay's inbound message as stored columns. Stored media is named by the id the edge derives from
 * the message (the relay cannot point a message at another item), and its address must be the upload's `…/media/{id}`.
 */
import type { z } from 'zod'
import type { InboundMessage } from '../../schema/frames'
import type { MediaKind } from '../../schema/d1'
import { mediaIdFor, mediaPath } from './ids'

/** A store item as the message keeps it: its id, kind, size, name, and why it is not stored if over the cap. */
export type StoredItem = {
  id: string
  kind: MediaKind
  /** Null when unknown: an item whose provider URL could not be fetched. */
  size: number | null
  fileName: string | null
  error: string | null
  status: 'stored' | 'too_large' | 'unavailable'
}

export async function inboundMedia(
  ref: { tenantId: string; accountId: string },
  m: z.infer<typeof InboundMessage>
): Promise<{ mediaUrl: string | null; mediaContentType: string | null; stored: StoredItem | null }> {
  if (!m.media) return { mediaUrl: null, mediaContentType: null, stored: null }
  const s = m.media.stored
  if (!s) return { mediaUrl: m.media.url, mediaContentType: m.media.contentType, stored: null }
  const id = await mediaIdFor(ref.tenantId, ref.accountId, m.upstreamId)
  const path = mediaPath(id)
  const origin = m.media.url.endsWith(path) ? m.media.url.slice(0, -path.length) : ''
  return {
    mediaUrl: `${origin}${path}`,
    mediaContentType: m.media.contentType,
    stored: { id, kind: s.kind, size: s.size, fileName: s.fileName, error: s.tooLarge, status: s.tooLarge ? 'too_large' : 'stored' },
  }
}
