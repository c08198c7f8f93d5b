/** The `media` object of a message, from its stored columns: the same shape in REST answers and webhook payloads. */
import type { z } from 'zod'
import type { MessageMedia } from '../../schema/media'
import type { MessageRow } from './messages'

export type MediaFacts = Pick<
  MessageRow,
  'mediaUrl' | 'mediaContentType' | 'mediaId' | 'mediaKind' | 'mediaSize' | 'mediaFileName' | 'mediaError' | 'mediaStatus'
>

export function wireMedia(m: MediaFacts): z.infer<typeof MessageMedia> | null {
  if (!m.mediaUrl) return null
  if (!m.mediaId) return { url: m.mediaUrl, content_type: m.mediaContentType }
  return {
    url: m.mediaUrl,
    content_type: m.mediaContentType,
    id: m.mediaId,
    kind: m.mediaKind,
    size: m.mediaSize,
    file_name: m.mediaFileName,
    too_large: m.mediaStatus === 'too_large' || (m.mediaStatus === null && m.mediaError !== null),
    unavailable: m.mediaStatus === 'unavailable',
    reason: m.mediaError,
  }
}
