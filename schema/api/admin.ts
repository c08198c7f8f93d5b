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

export const CreateRelayBody = z
  .object({
    tenant_id: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .meta({ description: "Scope the relay to one tenant: it only ever receives that tenant's accounts (a user's own relay)" }),
    name: z.string().min(1).max(100).optional().meta({ description: 'A label, e.g. the host it runs on' }),
  })
  .meta({ id: 'CreateRelayBody' })

export const AdminRelayToken = z
  .object({
    id: z.string(),
    tenant_id: z.string().nullable(),
    name: z.string().nullable(),
    token: z.string().meta({ description: 'Shown once; only its hash is stored. The relay sends it as Authorization: Bearer' }),
    prefix: z.string(),
    created_at: DateTime,
  })
  .meta({ id: 'AdminRelayToken' })

export const AdminRelayLink = z.object({
  instance: z.string().nullable().meta({ description: 'Random per relay process' }),
  version: z.string().nullable(),
  driver: z.string().nullable(),
  channels: z.array(z.string()),
  draining: z.boolean(),
  connected_at: DateTime,
  last_seen_at: DateTime.meta({ description: 'Last heartbeat or frame' }),
  sessions: z.array(z.object({ session_id: z.string(), tenant_id: z.string(), account_id: z.string(), fence: z.number().int() })),
})

export const AdminRelay = z
  .object({
    id: z.string(),
    tenant_id: z.string().nullable(),
    name: z.string().nullable(),
    prefix: z.string(),
    created_at: DateTime,
    connected: z.boolean(),
    links: z.array(AdminRelayLink).meta({ description: 'Live connections using this token (one per relay process)' }),
  })
  .meta({ id: 'AdminRelay' })

export const AdminRelayList = z.object({ relays: z.array(AdminRelay) }).meta({ id: 'AdminRelayList' })
export const RelayIdParam = z.object({ relayId: z.string().min(1).max(64) })
export const AdminRelayRevoked = z.object({ success: SuccessFlag, id: z.string(), links_closed: z.number().int() }).meta({ id: 'AdminRelayRevoked' })
