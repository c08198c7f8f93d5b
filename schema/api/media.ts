/**
 * Media shapes (docs/media.md): the media id path parameter and the fresh-link answer. The media object of a message
 * is schema/media.ts, shared with the webhook payloads.
 */
import { z } from 'zod'
import { MEDIA_KINDS } from '../d1'
import { DateTime } from './common'

export const MediaIdParam = z.object({
  mediaId: z
    .string()
    .regex(/^med_[0-9a-f]{24}$/, 'must be a media id (med_…)')
    .meta({ description: 'The media id: `media.id` of a message' }),
})

export const MediaLink = z
  .object({
    id: z.string(),
    url: z.string().meta({ description: 'Signed link to the bytes; works without an API key until expires_at' }),
    expires_at: DateTime,
    content_type: z.string(),
    size: z.number().int(),
    kind: z.enum(MEDIA_KINDS),
    file_name: z.string().nullable(),
  })
  .meta({ id: 'MediaLink' })

export const MediaStatus = z.enum(['stored', 'too_large', 'unavailable'])
