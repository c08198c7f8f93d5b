/** The media kind of an inbound item from its content type, for drivers whose upstream does not say (the simulator). */
import type { MediaKind } from './connector'

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
