/**
 * The `media` object a message carries, the same on every surface: REST messages (schema/api/messages.ts) and
 * webhook payloads (schema/events.ts). Below both, so neither imports the other.
 */
import { z } from 'zod'
import { MEDIA_KINDS } from './d1'

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
