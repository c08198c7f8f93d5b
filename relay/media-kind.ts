/** Media kinds and content types of inbound items, shared by the drivers. */
import type { MediaKind } from './connector'

/** The media kind of an inbound item from its content type, for drivers whose upstream does not say (the simulator). */
export function mediaKindOf(contentType: string, voiceNote: boolean): MediaKind {
  const type = contentType.split(';')[0]!.trim().toLowerCase()
  if (voiceNote) return 'voice_note'
  // alpha sends stickers as WebP images.
  if (type === 'image/webp') return 'sticker'
  if (type.startsWith('image/')) return 'image'
  if (type.startsWith('video/')) return 'video'
  if (type.startsWith('audio/')) return 'audio'
  return 'document'
}

/** The content type an item of each kind is stored with when its upstream gives none. */
export const FALLBACK_TYPES: Record<MediaKind, string> = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/mpeg',
  voice_note: 'audio/ogg; codecs=opus',
  document: 'application/octet-stream',
  sticker: 'image/webp',
}
