/**
 * Request shapes, taken from the spec (4.4 to 4.6: beta, SMS, page inbox), of REST routes that are not built on this branch yet, so
 * the MCP tool table already lists their final arguments. When a route lands, its tool imports the route's own
 * schema from schema/api instead and the entry here is deleted (the REST validator stays the only judge).
 */
import { z } from 'zod'
import { E164 } from '../../schema/api/common'

const httpsUrl = z.url({ protocol: /^https$/, error: 'must be an https URL' }).max(2048)

export const ConnectBetaBody = z.object({
  phone_number: E164,
  mode: z.enum(['code', 'qr']).default('code').describe('code: a one-time code is sent to the beta app; qr: a login QR link is returned'),
  force_new: z.boolean().optional().describe('true discards any existing session'),
})

export const BetaCodeBody = z.object({ code: z.string().min(1).max(32).describe('The one-time login code from the beta app') })
export const BetaPasswordBody = z.object({ password: z.string().min(1).max(256).describe('The two-step verification password') })

export const ConnectSmsBody = z.object({
  account_sid: z.string().min(1).max(64),
  auth_token: z.string().min(1).max(128).describe('Checked with the provider and stored sealed; never returned'),
  phone_number: E164.describe('A number on that provider account'),
  a2p_registered: z.boolean().default(false).describe('Must be true for a +1 number: carrier (A2P) registration is done'),
})

export const ConnectAndroidSmsBody = z.object({
  username: z.string().min(1).max(128),
  password: z.string().min(1).max(256),
  phone_number: E164.describe("The phone's own number"),
  mode: z.enum(['cloud', 'local']).default('cloud').describe('cloud: through the gateway app’s cloud server; local: the phone is reached directly at base_url'),
  base_url: httpsUrl.optional().describe('Required with mode local: the public https URL of the phone'),
})

export const SetSocialAppBody = z.object({
  app_id: z.string().min(1).max(64).describe("The App ID of the user's own registered app"),
  app_secret: z.string().min(1).max(256).describe('The App Secret; stored sealed, never returned'),
  configuration_id: z.string().min(1).max(64).describe('The login configuration ID of that app'),
})

export const SelectPageBody = z.object({ page_id: z.string().min(1).max(64).describe('An id from list_pages') })
