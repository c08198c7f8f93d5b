/**
 * /admin: issuing tenants and API keys, the tenant switches, plan changes and the suspension review. Guarded by
 * the ADMIN_TOKEN secret; `npm run key` uses it against the local server.
 */
import { createRoute, z } from '@hono/zod-openapi'
import { AdminApiKey, AdminOk, AdminTenant, KeyIdParam, TenantIdParam } from '../../schema/api/admin'
import { KeyFields } from '../../schema/api/keys'
import { getApiKey, issueApiKey, revokeApiKey } from '../db/api-keys'
import { restoreRestrictedAccounts } from '../db/accounts'
import { insertEvent } from '../db/events'
import { DEFAULT_MESSAGE_RETENTION_DAYS, retentionDays } from '../db/message-retention'
import { roomiestShard } from '../db/shard-stats'
import { directory, shardCount, shardDb } from '../db/shards'
import { createTenant, getTenant, updateTenant, type Tenant } from '../db/tenants'
import { expireKeySubscriptions } from '../db/webhooks'
import { ApiError } from '../errors'
import { accountEventPayload } from '../events/payloads'
import { iso } from '../lib/time'
import { DEFAULT_PLAN, PLAN_NAMES } from '../plans'
import { fullGrant, mintFrom } from '../safety/grant'
import { keyRequest, keyView } from '../safety/key-view'
import { emptyBodyIsNone, resourceApp } from '../validate'
import { commitEvents } from '../webhooks/emit'
import { statusErrors } from '../lib/openapi-responses'

export const adminRoutes = resourceApp()
adminRoutes.use('/tenants', emptyBodyIsNone)

/** A hundred years: a number, not forever (that is 0). */
const MAX_RETENTION_DAYS = 36_500

const CreateTenantBody = z.object({
  plan: z.enum(PLAN_NAMES).default(DEFAULT_PLAN),
  shard: z.number().int().min(0).optional().meta({ description: 'The shard to place the tenant on (GET /admin/shards); default: the one with the most room' }),
})
const PatchTenantBody = z
  .object({
    plan: z.enum(PLAN_NAMES).optional(),
    status: z.literal('active').optional().meta({ description: 'Lifts a suspension (the service’s review after an opener burst)' }),
    api_enabled: z.boolean().optional(),
    webhooks_enabled: z.boolean().optional(),
    message_retention_days: z
      .number()
      .int()
      .min(0)
      .max(MAX_RETENTION_DAYS)
      .nullable()
      .optional()
      .meta({
        description: `Days this tenant's messages are kept (1 to ${MAX_RETENTION_DAYS}); 0 keeps them forever; null returns to the default (${DEFAULT_MESSAGE_RETENTION_DAYS})`,
      }),
    alpha_passkey_linking: z
      .boolean()
      .optional()
      .meta({ description: 'Let the relay complete the phone’s passkey ceremony when linking alpha numbers; applies to links started after the change' }),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one of plan, status, api_enabled, webhooks_enabled, message_retention_days, alpha_passkey_linking')

const errors = (codes: number[]) => statusErrors(codes)
const security = [{ adminToken: [] }]

function view(t: Tenant) {
  return {
    id: t.id,
    plan: t.plan,
    status: t.status,
    suspended_reason: t.suspendedReason,
    api_enabled: t.apiEnabled,
    webhooks_enabled: t.webhooksEnabled,
    alpha_passkey_linking: t.alphaPasskeyLinking,
    created_at: iso(t.createdAt),
    message_retention_days: retentionDays(t.messageRetentionDays),
    message_retention_set: t.messageRetentionDays !== null,
    shard: t.shard,
    moving_to: t.movingTo,
  }
}

adminRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/tenants',
    tags: ['Admin'],
    summary: 'Create a tenant',
    description:
      'Places the tenant on the shard with the most room (whole percents of its capacity, the lowest number on a tie), or on `shard`. 507 `shards_full` when every shard is past its refusal mark (docs/CAPACITY.md).',
    security,
    request: { body: { required: false, content: { 'application/json': { schema: CreateTenantBody } } } },
    responses: { 201: { description: 'Created', content: { 'application/json': { schema: AdminTenant } } }, ...errors([400, 401, 507]) },
  }),
  async (c) => {
    const { plan, shard: chosen } = c.req.valid('json') ?? { plan: DEFAULT_PLAN }
    if (chosen !== undefined && chosen >= shardCount(c.env))
      throw new ApiError(400, 'unknown_shard', `No shard ${chosen}: this gateway binds ${shardCount(c.env)}`)
    const shard = chosen ?? (await roomiestShard(c.env))
    const tenant = await createTenant(directory(c.env), { shard, db: shardDb(c.env, shard) }, plan ?? DEFAULT_PLAN, Date.now())
    return c.json(view(tenant), 201)
  }
)

adminRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/tenants/{id}',
    tags: ['Admin'],
    summary: 'Get a tenant',
    security,
    request: { params: TenantIdParam },
    responses: { 200: { description: 'The tenant', content: { 'application/json': { schema: AdminTenant } } }, ...errors([401, 404]) },
  }),
  async (c) => {
    const tenant = await getTenant(directory(c.env), c.req.valid('param').id)
    if (!tenant) throw new ApiError(404, 'tenant_not_found', 'No such tenant')
    return c.json(view(tenant), 200)
  }
)

adminRoutes.openapi(
  createRoute({
    method: 'patch',
    path: '/tenants/{id}',
    tags: ['Admin'],
    summary: 'Change plan, switches or message retention, or lift a suspension',
    description:
      '`status: "active"` is the review that lifts a suspension; accounts restricted by the opener-burst rule become connected again. `message_retention_days` sets how long the tenant\'s messages are kept (0 = forever, null = the default); the next cron run applies it, archiving what it deletes (docs/admin.md).',
    security,
    request: { params: TenantIdParam, body: { required: true, content: { 'application/json': { schema: PatchTenantBody } } } },
    responses: { 200: { description: 'The tenant', content: { 'application/json': { schema: AdminTenant } } }, ...errors([400, 401, 404, 409]) },
  }),
  async (c) => {
    const dir = directory(c.env)
    const { id } = c.req.valid('param')
    const body = c.req.valid('json')
    const current = await getTenant(dir, id)
    if (!current) throw new ApiError(404, 'tenant_not_found', 'No such tenant')
    // The move copies the tenant's row with the rest; a change now could miss the copy.
    if (current.movingTo !== null)
      throw new ApiError(409, 'tenant_moving', `The tenant is moving to shard ${current.movingTo}; change it once the move is done`)
    const db = shardDb(c.env, current.shard)
    const tenant = await updateTenant(dir, { shard: current.shard, db }, id, {
      plan: body.plan,
      apiEnabled: body.api_enabled,
      webhooksEnabled: body.webhooks_enabled,
      messageRetentionDays: body.message_retention_days,
      alphaPasskeyLinking: body.alpha_passkey_linking,
      status: body.status,
    })
    if (!tenant) throw new ApiError(404, 'tenant_not_found', 'No such tenant')
    if (body.status === 'active') {
      const now = Date.now()
      const restored = await restoreRestrictedAccounts(db, id, 'opener_burst', now)
      const [first, ...rest] = restored.map((a) => insertEvent(db, id, a.id, accountEventPayload('account.connected', a, 'suspension_lifted', now), now))
      if (first) await commitEvents(c.env, db, [first, ...rest])
    }
    return c.json(view(tenant), 200)
  }
)

adminRoutes.use('/tenants/:id/keys', emptyBodyIsNone)
adminRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/tenants/{id}/keys',
    tags: ['Admin'],
    summary: 'Issue an API key',
    description:
      'The key (`svc_live_` + 40 base62 characters) is in this answer only; the service keeps its hash. Without a body it is a full key; the body narrows it like POST /v1/keys (scope, label, accounts, expires_at, reply_window_s, approval), and the answer then shows those fields too.',
    security,
    request: { params: TenantIdParam, body: { required: false, content: { 'application/json': { schema: KeyFields } } } },
    responses: { 201: { description: 'The new key', content: { 'application/json': { schema: AdminApiKey } } }, ...errors([401, 404]) },
  }),
  async (c) => {
    const db = directory(c.env)
    const { id } = c.req.valid('param')
    if (!(await getTenant(db, id))) throw new ApiError(404, 'tenant_not_found', 'No such tenant')
    const now = Date.now()
    const fields = c.req.valid('json')
    if (!fields || Object.keys(fields).length === 0) {
      const key = await issueApiKey(db, id, now)
      return c.json({ ...key, created_at: iso(key.created_at) }, 201)
    }
    // The admin stands above every key: it mints from a full, unlimited grant.
    const check = mintFrom(fullGrant(''), keyRequest(fields), now)
    if (!check.ok) throw new ApiError(400, 'invalid_request', check.message)
    const key = await issueApiKey(db, id, now, check.grant)
    const row = await getApiKey(db, id, key.id)
    return c.json({ ...keyView(row!), ...key, created_at: iso(key.created_at) }, 201)
  }
)

adminRoutes.openapi(
  createRoute({
    method: 'delete',
    path: '/keys/{keyId}',
    tags: ['Admin'],
    summary: 'Revoke an API key',
    security,
    request: { params: KeyIdParam },
    responses: { 200: { description: 'Revoked', content: { 'application/json': { schema: AdminOk } } }, ...errors([401, 404]) },
  }),
  async (c) => {
    const dir = directory(c.env)
    const { keyId } = c.req.valid('param')
    const now = Date.now()
    const tenantId = await revokeApiKey(dir, keyId, now)
    if (!tenantId) throw new ApiError(404, 'key_not_found', 'No live key with that id')
    const tenant = await getTenant(dir, tenantId)
    if (tenant) await expireKeySubscriptions(shardDb(c.env, tenant.shard), tenantId, keyId, now)
    return c.json({ success: true as const }, 200)
  }
)
