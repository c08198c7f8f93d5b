/**
 * Request shapes, taken from the spec (4.4: beta), of REST routes that are not built on this branch yet, so
 * the MCP tool table already lists their final arguments. When a route lands, its tool imports the route's own
 * schema from schema/api instead and the entry here is deleted (the REST validator stays the only judge).
 */
import { z } from 'zod'
import { E164 } from '../../schema/api/common'


export const ConnectBetaBody = z.object({
  phone_number: E164,
  mode: z.enum(['code', 'qr']).default('code').describe('code: a one-time code is sent to the beta app; qr: a login QR link is returned'),
  force_new: z.boolean().optional().describe('true discards any existing session'),
})

export const BetaCodeBody = z.object({ code: z.string().min(1).max(32).describe('The one-time login code from the beta app') })
export const BetaPasswordBody = z.object({ password: z.string().min(1).max(256).describe('The two-step verification password') })
