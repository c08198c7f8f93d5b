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

/**
 * An integer query parameter, `min` to `max`: decimal digits only. z.coerce would read an empty value as 0 (a wait
 * with `timeout_s=` answering at once), `0x10` as 16 and `1e1` as 10; those are refused (400) instead. Shown as an
 * integer in the OpenAPI document, and an MCP tool's argument takes a number as before.
 */
export const queryInt = (min: number, max: number) =>
  z.preprocess((v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v), z.number().int().min(min).max(max))

/** The header a creating POST takes (draft-ietf-httpapi-idempotency-key-header). */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key'

/** The longest Idempotency-Key accepted (Stripe's limit; a UUID is 36). */
export const IDEMPOTENCY_KEY_MAX = 255

/**
 * `Idempotency-Key` on a creating POST (docs/idempotency.md): a retry with the same key and request gets the first
 * answer again instead of acting twice. The middleware (worker/middleware/idempotency.ts) reads and checks the header
 * itself; this declaration names it in the OpenAPI document and in the route's MCP tool.
 */
export const IdempotencyKeyHeader = z.object({
  [IDEMPOTENCY_HEADER]: z
    .string()
    .min(1)
    .max(IDEMPOTENCY_KEY_MAX)
    .regex(/^[\x21-\x7e]+$/, 'visible ASCII characters only')
    .optional()
    .meta({
      description:
        'A unique value per operation (a UUID). A retry with the same key and the same request within 24 h gets the first answer again, marked `Idempotent-Replayed: true`, and acts once; the same key with another body answers 422 `idempotency_key_reused`, and while the first request runs, 409 `idempotency_key_in_progress` with Retry-After.',
      example: '7f3c1d2e-9a4b-4c8e-b1f0-2d6a5e7c9b10',
    }),
})
