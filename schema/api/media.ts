/** Media shapes (docs/media.md): the media object of a message, the path parameter, and the fresh-link answer. */
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

/**
 * `media` of a message (spec 2: `url`, `content_type`), plus what the media store keeps with it. `url` of a stored
 * item is a signed link (24 h by default); links of the custom channel are the sender's own URL and `id` is null.
 */
export const MessageMedia = z
  .object({
    url: z.string(),
    content_type: z.string().nullable(),
    id: z.string().nullable().optional().meta({ description: 'Media store id for GET /v1/media/{mediaId}; null for a link-only item' }),
    kind: z.enum(MEDIA_KINDS).nullable().optional(),
    size: z.number().int().nullable().optional().meta({ description: 'Bytes' }),
    file_name: z.string().nullable().optional(),
    too_large: z.boolean().optional().meta({ description: 'True when the item was over the size cap and is not stored; `reason` says why' }),
    unavailable: z.boolean().optional().meta({
      description:
        "True when the provider's copy (an SMS/MMS or page-inbox attachment) could not be fetched into the store after retries; the message is kept, `reason` says why, and the link answers 404",
    }),
    reason: z.string().nullable().optional(),
  })
  .meta({ id: 'MessageMedia' })
