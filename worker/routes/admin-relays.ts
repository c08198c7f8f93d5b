/**
 * /admin/relays: relay tokens. A token is shown once and stored hashed; scoped to a tenant it only ever receives
 * that tenant's accounts. Listing shows each token's live links and the sessions they hold; revoking cuts them.
 */
import { createRoute } from '@hono/zod-openapi'
import { AdminRelayList, AdminRelayRevoked, AdminRelayToken, CreateRelayBody, RelayIdParam } from '../../schema/api/admin'
import { directory } from '../db/shards'
import { issueRelayToken, listRelays, revokeRelay } from '../db/relays'
import { getTenant } from '../db/tenants'
import { ApiError } from '../errors'
import { iso } from '../lib/time'
import { relayHub } from '../lib/objects'
import { emptyBodyIsNone, resourceApp } from '../validate'
import { statusErrors } from '../lib/openapi-responses'

export const adminRelayRoutes = resourceApp()
adminRelayRoutes.use('/', emptyBodyIsNone)

const errors = (codes: number[]) => statusErrors(codes)
const security = [{ adminToken: [] }]

adminRelayRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/',
    tags: ['Admin'],
    summary: 'Issue a relay token',
    description:
      'The token (`rly_` + 40 base62 characters) is in this answer only. Without `tenant_id` the relay serves every tenant that runs no relay of its own; with it, only that tenant.',
    security,
    request: { body: { required: false, content: { 'application/json': { schema: CreateRelayBody } } } },
    responses: { 201: { description: 'The new token', content: { 'application/json': { schema: AdminRelayToken } } }, ...errors([400, 401, 404]) },
  }),
  async (c) => {
    const body = c.req.valid('json') ?? {}
    const db = directory(c.env)
    if (body.tenant_id && !(await getTenant(db, body.tenant_id))) throw new ApiError(404, 'tenant_not_found', 'No such tenant')
    const { row, token } = await issueRelayToken(db, body.tenant_id ?? null, body.name ?? null, Date.now())
    return c.json({ id: row.id, tenant_id: row.tenantId, name: row.name, token, prefix: row.prefix, created_at: iso(row.createdAt) }, 201)
  }
)

adminRelayRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/',
    tags: ['Admin'],
    summary: 'List relays with their live links',
    description:
      'Every relay token that is not revoked, with its scope (the whole service, or one tenant) and the relay processes connected with it now: instance, version, driver, channels, whether it is draining, and the sessions it holds.',
    security,
    responses: {
      200: { description: 'Unrevoked relay tokens and their live connections', content: { 'application/json': { schema: AdminRelayList } } },
      ...errors([401]),
    },
  }),
  async (c) => {
    const [rows, links] = await Promise.all([listRelays(directory(c.env)), relayHub(c.env).relayLinks()])
    const relays = rows.map((r) => {
      const mine = links.filter((l) => l.relay_id === r.id)
      return {
        id: r.id,
        tenant_id: r.tenantId,
        name: r.name,
        prefix: r.prefix,
        created_at: iso(r.createdAt),
        connected: mine.some((l) => l.instance !== null),
        links: mine.map((l) => ({
          instance: l.instance,
          version: l.version,
          driver: l.driver,
          channels: l.channels,
          draining: l.draining,
          connected_at: iso(l.connected_at),
          last_seen_at: iso(l.last_seen_at),
          sessions: l.sessions,
        })),
      }
    })
    return c.json({ relays }, 200)
  }
)

adminRelayRoutes.openapi(
  createRoute({
    method: 'delete',
    path: '/{relayId}',
    tags: ['Admin'],
    summary: 'Revoke a relay token',
    description: 'The token stops working at once and every live connection using it is closed; its sessions move to another relay once their leases lapse.',
    security,
    request: { params: RelayIdParam },
    responses: { 200: { description: 'Revoked', content: { 'application/json': { schema: AdminRelayRevoked } } }, ...errors([401, 404]) },
  }),
  async (c) => {
    const { relayId } = c.req.valid('param')
    const row = await revokeRelay(directory(c.env), relayId, Date.now())
    if (!row) throw new ApiError(404, 'relay_not_found', 'No live relay token with that id')
    const closed = await relayHub(c.env).cutRelay(row.id)
    return c.json({ success: true as const, id: row.id, links_closed: closed }, 200)
  }
)
