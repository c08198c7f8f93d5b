/** Admin shapes: issuing tenants and keys, switches, plan and suspension review (guarded by ADMIN_TOKEN). */
import { z } from 'zod'
import { DateTime, SuccessFlag } from './common'

export const AdminTenant = z
  .object({
    id: z.string(),
    plan: z.string(),
    status: z.enum(['active', 'suspended']),
    suspended_reason: z.string().nullable(),
    api_enabled: z.boolean(),
    webhooks_enabled: z.boolean(),
    created_at: DateTime,
  })
  .meta({ id: 'AdminTenant' })

export const AdminApiKey = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    key: z.string().meta({ description: 'Shown once; only its hash is stored' }),
    prefix: z.string(),
    created_at: DateTime,
  })
  .meta({ id: 'AdminApiKey' })

export const TenantIdParam = z.object({ id: z.string().min(1).max(64) })
export const KeyIdParam = z.object({ keyId: z.string().min(1).max(64) })
export const AdminOk = z.object({ success: SuccessFlag })
