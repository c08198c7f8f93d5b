/** Shapes shared by every REST resource: phone numbers, error bodies (spec part 7), timestamps. */
import { z } from 'zod'

// Declared below schema/api/ (webhook event filters use it too); every REST shape takes it from here.
export { E164 } from '../phone'

export const DateTime = z.iso.datetime().meta({ example: '2026-11-21T12:00:00.000Z' })

/** Error body of the messaging and usage endpoints. */
export const MessagingError = z
  .object({
    error_code: z.string().meta({ description: 'Stable machine-readable code, e.g. daily_send_cap' }),
    error: z.string().meta({ description: 'One human-readable sentence' }),
    retry_after_s: z.number().int().optional().meta({ description: 'Seconds until the next UTC day; on every daily-limit 429' }),
  })
  .meta({ id: 'MessagingError' })

/** Error body of the auth, admin, webhook and channel-connection endpoints. */
export const StatusError = z
  .object({
    success: z.literal(false),
    error: z.string(),
    error_code: z.number().int().meta({ description: 'The HTTP status' }),
  })
  .meta({ id: 'StatusError' })

export const SuccessFlag = z.literal(true)
