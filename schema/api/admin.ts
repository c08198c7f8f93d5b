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
    alpha_passkey_linking: z.boolean().meta({
      description:
        'The relay completes the phone’s passkey ceremony when an alpha number is linked (docs/channels/alpha.md, “When the phone asks for a passkey”). Off by default: a malformed pairing request can get a number banned.',
    }),
    created_at: DateTime,
    message_retention_days: z.number().int().meta({ description: 'Days messages are kept in force for this tenant; 0 = forever' }),
    message_retention_set: z.boolean().meta({ description: 'false: the service default applies (90 days); true: set for this tenant' }),
    shard: z.number().int().meta({ description: "The shard holding the tenant's rows (GET /admin/shards)" }),
    moving_to: z.number().int().nullable().meta({ description: 'The shard a running move copies the tenant to; null when none runs' }),
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

export const AdminShard = z
  .object({
    shard: z.number().int().meta({ description: 'The number of its binding, DB_SHARD_<n>' }),
    size_bytes: z.number().int().nullable().meta({ description: "D1's own figure (meta.size_after); null when the shard did not answer" }),
    capacity_bytes: z.number().int().meta({ description: 'What one shard may hold (SHARD_CAPACITY_BYTES, D1 caps a database at 10 GB)' }),
    used_percent: z.number().nullable(),
    tenants: z.number().int().meta({ description: 'Tenants placed on it' }),
    level: z.enum(['ok', 'warning', 'full', 'unreachable']).meta({
      description: '`warning` past 80 % of its capacity (the alarm: add a shard or move tenants), `full` past 90 % (no new tenant, no move in)',
    }),
  })
  .meta({ id: 'AdminShard' })

export const AdminShardList = z
  .object({
    shards: z.array(AdminShard),
    alarm: z.boolean().meta({ description: 'true when a shard is at `warning`, `full` or `unreachable`' }),
  })
  .meta({ id: 'AdminShardList' })

export const MoveTenantBody = z
  .object({ shard: z.number().int().min(0).meta({ description: 'The shard to move the tenant to' }) })
  .meta({ id: 'MoveTenantBody' })

export const TenantMove = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    from: z.number().int(),
    to: z.number().int(),
    phase: z
      .enum(['fencing', 'clearing', 'copying', 'verifying', 'settling', 'draining', 'done', 'abandoning', 'failed'])
      .meta({ description: 'docs/admin.md "Moving a tenant": the tenant lives on `to` from `settling` on; `failed` left it on `from`' }),
    rows_copied: z.number().int(),
    rows_deleted: z.number().int(),
    started_at: DateTime,
    updated_at: DateTime,
    settle_until: DateTime.nullable(),
    finished_at: DateTime.nullable(),
    error: z.string().nullable().meta({ description: 'Why it failed, or the last failed step while it retries' }),
  })
  .meta({ id: 'TenantMove' })
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

/** POST /admin/secrets/reseal: one bounded page of the re-seal walk (docs/security.md, Secret rotation). */
export const ResealBody = z.object({
  cursor: z.string().min(1).max(512).optional().meta({ description: '`next_cursor` of the previous answer; omit to start at the beginning' }),
  limit: z.number().int().min(1).max(500).optional().meta({ description: 'Values to re-seal in this call (default 100)' }),
})

const SealedPlace = z.object({ column: z.string(), tenant_id: z.string(), row_id: z.string() })

export const ResealAnswer = z
  .object({
    success: SuccessFlag,
    key_id: z.string().meta({ description: 'The key every value re-sealed here is now sealed with (ENCRYPTION_KEY_ID)' }),
    resealed: z.number().int(),
    unreadable: z.array(SealedPlace.extend({ error: z.string() })).meta({ description: 'Values that open under no key of the ring: left as they are' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass it as `cursor` to continue; null when the walk is complete' }),
  })
  .meta({ id: 'AdminResealAnswer' })

export const SecretsStatus = z
  .object({
    success: SuccessFlag,
    key_id: z.string().meta({ description: 'The key new values are sealed with' }),
    key_ids: z.array(z.string()).meta({ description: 'Every key in the ring (secrets are never shown)' }),
    not_current: z.record(z.string(), z.number().int()).meta({ description: 'Per sealed column, the values not yet under `key_id`' }),
    total_not_current: z.number().int().meta({ description: '0 means every value is under the current key: older keys can leave the ring' }),
  })
  .meta({ id: 'AdminSecretsStatus' })
