/** A phone number on the wire, E.164: REST shapes (schema/api/) and webhook event filters (events.ts) both use it. */
import { z } from 'zod'

export const E164 = z
  .string()
  .regex(/^\+[1-9]\d{6,14}$/, 'must be a phone number in E.164 format, such as +15551234567')
  .meta({ example: '+15551234567' })
