/** Page-inbox shapes (spec 4.6): the user's own app, the connect flow, the pages to pick from, the state answer. */
import { z } from 'zod'
import { DateTime, SuccessFlag } from './common'

const graphId = z.string().regex(/^\d{1,32}$/, 'must be a numeric Graph id')

export const SetSocialAppBody = z
  .object({
    app_id: graphId.meta({ description: 'App ID of your own app (App Dashboard → App settings → Basic)', example: '1234567890123456' }),
    app_secret: z.string().min(8).max(200).meta({ description: 'App Secret of that app; stored sealed, never returned' }),
    configuration_id: graphId
      .optional()
      .meta({ description: 'Configuration ID of the app’s Facebook Login for Business configuration', example: '987654321098765' }),
    config_id: graphId.optional().meta({ description: 'Same as configuration_id (Graph’s own name for it); give one of the two' }),
  })
  .refine((b) => (b.configuration_id ?? b.config_id) !== undefined, { message: 'configuration_id is required', path: ['configuration_id'] })
  .refine((b) => b.configuration_id === undefined || b.config_id === undefined || b.configuration_id === b.config_id, {
    message: 'configuration_id and config_id differ',
    path: ['config_id'],
  })
  .meta({ id: 'SetSocialAppBody' })

export const SocialApp = z
  .object({
    success: SuccessFlag,
    app_id: z.string(),
    configuration_id: z.string(),
    app_secret_set: z.literal(true),
    redirect_uri: z.string().meta({ description: 'Paste into Facebook Login for Business → Settings → Valid OAuth Redirect URIs' }),
    callback_url: z.string().meta({ description: 'Paste into Webhooks (Page, and Instagram) as the Callback URL' }),
    verify_token: z.string().meta({ description: 'Paste into Webhooks as the Verify Token' }),
  })
  .meta({ id: 'SocialApp' })

export const SocialConnectBody = z.object({}).meta({ id: 'SocialConnectBody' })

export const SocialConnect = z
  .object({
    success: SuccessFlag,
    status: z.literal('pending'),
    connect_url: z.string().meta({ description: 'A page of this service, valid a short time, that leads to the permission screen' }),
    connect_url_expires_at: z.number().int().meta({ description: 'Unix epoch milliseconds' }),
  })
  .meta({ id: 'SocialConnect' })

const Instagram = z.object({ id: z.string(), username: z.string().nullable() }).meta({ id: 'SocialInstagramAccount' })

export const SocialPageChoice = z
  .object({
    id: z.string(),
    name: z.string(),
    instagram: Instagram.nullable().meta({ description: 'The linked Instagram professional account; connected with the page' }),
    can_message: z.boolean().meta({ description: 'Whether your role on the page includes messaging (task MESSAGING, MODERATE or MANAGE)' }),
  })
  .meta({ id: 'SocialPageChoice' })

export const SocialPages = z.object({ success: SuccessFlag, pages: z.array(SocialPageChoice) }).meta({ id: 'SocialPages' })

export const SelectPageBody = z.object({ page_id: graphId }).meta({ id: 'SelectPageBody' })

export const SOCIAL_STATUSES = ['not_connected', 'pending', 'pages_loaded', 'connected', 'failed', 'expired'] as const

export const SocialStatus = z
  .object({
    success: SuccessFlag,
    status: z.enum(SOCIAL_STATUSES).meta({
      description: 'pending → pages_loaded → connected; failed carries a reason; expired: the link or the page choice lapsed, connect again',
    }),
    reason: z.string().nullable(),
    account_id: z.string().nullable().meta({ description: 'The social account to send from (account_id of POST /messages)' }),
    page: z.object({ id: z.string(), name: z.string() }).nullable(),
    instagram: Instagram.nullable(),
    app_id: z.string().nullable(),
    connected_at: DateTime.nullable(),
    expires_at: z.number().int().nullable().meta({ description: 'While pending or pages_loaded: when this step lapses (epoch ms)' }),
  })
  .meta({ id: 'SocialStatus' })

export const SocialRemoved = z
  .object({ success: SuccessFlag, status: z.enum(['removed', 'not_connected']), removed: z.array(z.string()).meta({ description: 'Account ids removed' }) })
  .meta({ id: 'SocialRemoved' })
