/**
 * /admin: the shards (docs/admin.md "Shards"): each with its size, capacity, tenants and alarm level, and moving a
 * tenant to another (its TenantMoveDO runs the move, worker/shards/move.ts). Guarded by ADMIN_TOKEN like all of /admin.
 */
import { createRoute } from '@hono/zod-openapi'
import { AdminShardList, MoveTenantBody, TenantIdParam, TenantMove } from '../../schema/api/admin'
import { shardStats } from '../db/shard-stats'
import { ApiError } from '../errors'
import { statusErrors } from '../lib/openapi-responses'
import { tenantMover } from '../lib/objects'
import { resourceApp } from '../validate'

export const adminShardRoutes = resourceApp()

const security = [{ adminToken: [] }]

adminShardRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/shards',
    tags: ['Admin'],
    summary: 'List the shards with their size and tenants',
    description:
      "Every bound shard (DB_SHARD_<n>) with D1's own size figure against SHARD_CAPACITY_BYTES, the tenants placed on it and its level: `warning` past 80 % (`alarm` is true: add a shard or move tenants off it), `full` past 90 % (it takes no new tenant and no move). The same figures are in GET /admin/metrics.",
    security,
    responses: { 200: { description: 'The shards', content: { 'application/json': { schema: AdminShardList } } }, ...statusErrors([401]) },
  }),
  async (c) => {
    const stats = await shardStats(c.env)
    const shards = stats.map((s) => ({
      shard: s.shard,
      size_bytes: s.sizeBytes,
      capacity_bytes: s.capacityBytes,
      used_percent: s.sizeBytes === null ? null : Math.round((1000 * s.sizeBytes) / s.capacityBytes) / 10,
      tenants: s.tenants,
      level: s.level,
    }))
    return c.json({ shards, alarm: stats.some((s) => s.level !== 'ok') }, 200)
  }
)

adminShardRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/tenants/{id}/move',
    tags: ['Admin'],
    summary: "Move a tenant's data to another shard",
    description:
      'Starts the move and answers at once (202); GET the same path follows it. While the rows are copied and checked, the tenant\'s writes answer 503 `temporarily_unavailable` with Retry-After (sends, pushes, open waits; reads go on), then it lives on the new shard and its cursors keep working (docs/admin.md "Moving a tenant"). 409 when it is there already or a move runs; 507 when the target is full.',
    security,
    request: { params: TenantIdParam, body: { required: true, content: { 'application/json': { schema: MoveTenantBody } } } },
    responses: {
      202: { description: 'Started', content: { 'application/json': { schema: TenantMove } } },
      ...statusErrors([400, 401, 404, 409, 507]),
    },
  }),
  async (c) => {
    const { id } = c.req.valid('param')
    const started = await tenantMover(c.env, id).start(id, c.req.valid('json').shard)
    if (!started.ok) throw new ApiError(started.status, started.code, started.message)
    return c.json(started.move, 202)
  }
)

adminShardRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/tenants/{id}/move',
    tags: ['Admin'],
    summary: "A tenant's running or last move",
    security,
    request: { params: TenantIdParam },
    responses: { 200: { description: 'The move', content: { 'application/json': { schema: TenantMove } } }, ...statusErrors([401, 404]) },
  }),
  async (c) => {
    const move = await tenantMover(c.env, c.req.valid('param').id).status()
    if (!move) throw new ApiError(404, 'move_not_found', 'This tenant was never moved')
    return c.json(move, 200)
  }
)
