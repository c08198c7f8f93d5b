/** Pieces of the control API's request bodies that alpha's and beta's routes share. */
import { z } from 'zod'
import type { SimAttachment } from './network'

export const E164 = z.string().regex(/^\+[1-9]\d{6,14}$/, 'must be E.164, e.g. +15551234567')

/** An attachment a simulated person sends: the relay downloads it from the network and stores it. */
export const SimMediaBody = z.object({
  content_type: z.string().min(1).max(200),
  file_name: z.string().max(512).nullable().optional(),
  data_base64: z.base64(),
  voice_note: z.boolean().default(false),
})

/** A parsed `media` body as the file either network holds. */
export function simFileOf(media: z.infer<typeof SimMediaBody>): SimAttachment {
  return { contentType: media.content_type, fileName: media.file_name ?? null, bytes: Buffer.from(media.data_base64, 'base64'), voiceNote: media.voice_note }
}
