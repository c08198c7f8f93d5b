/**
 * /v1/keys: the owner mints narrower keys for its agents, lists and revokes them (docs/agent-safety.md). Only the
 * owner's key (full, every account, no approval, no expiry) manages keys (worker/safety/scopes.ts), and a key never
 * mints a wider key than itself (worker/safety/grant.ts).
 */
import { createRoute } from '@hono/zod-openapi'
import { KeyFields, KeyIdPath, KeyList, MintedKey } from '../../schema/api/keys'
import { AdminOk } from '../../schema/api/admin'
import { IdempotencyKeyHeader } from '../../schema/api/common'
import { getApiKey, issueApiKey, listApiKeys, revokeApiKey } from '../db/api-keys'
import { directory } from '../db/shards'
import { expireKeySubscriptions } from '../db/webhooks'
import { ApiError } from '../errors'
import { clearAuthCache } from '../middleware/api-key'
import { mintFrom } from '../safety/grant'
import { keyRequest, keyView } from '../safety/key-view'
import { emptyBodyIsNone, resourceApp } from '../validate'
import { statusErrors } from '../lib/openapi-responses'

export const keysRoutes = resourceApp()

const NOT_OWNER = { 403: '`key_scope`: not the owner’s key (or `key_account` for a key with an account list)' }

keysRoutes.use('/', emptyBodyIsNone)
keysRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/',
    tags: ['Keys'],
    summary: 'Mint a narrower key',
    description:
      'Mints a key for an agent. Omitted fields copy the calling key; the new key can never be wider than it: scope at most its own, accounts among its own, expiry no later, reply window no longer, approval kept on. The key is in this answer only (and in its sealed replay for an `Idempotency-Key` retry, 24 h). Needs the owner’s key (full, every account, no approval, no expiry): an agent’s key cannot mint, list or revoke keys.',
    request: { headers: IdempotencyKeyHeader, body: { required: false, content: { 'application/json': { schema: KeyFields } } } },
    responses: {
      201: { description: 'The new key', content: { 'application/json': { schema: MintedKey } } },
      ...statusErrors([400, 401, 403, 409, 422], NOT_OWNER),
    },
  }),
  async (c) => {
    const db = directory(c.env)
    const now = Date.now()
    const check = mintFrom(c.get('key'), keyRequest(c.req.valid('json') ?? {}), now)
    if (!check.ok) throw new ApiError(403, 'key_scope', `A key cannot mint a wider key: ${check.message}`)
    const issued = await issueApiKey(db, c.get('tenant').id, now, check.grant, c.get('key').id || undefined)
    const row = await getApiKey(db, c.get('tenant').id, issued.id)
    return c.json({ success: true as const, ...keyView(row!), key: issued.key }, 201)
  }
)

keysRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/',
    tags: ['Keys'],
    summary: 'List keys',
    description: "The tenant's live keys, newest first, with their scope, accounts, expiry and label (never the key itself). Needs the owner’s key.",
    responses: { 200: { description: 'The keys', content: { 'application/json': { schema: KeyList } } }, ...statusErrors([401, 403], NOT_OWNER) },
  }),
  async (c) => c.json({ success: true as const, keys: (await listApiKeys(directory(c.env), c.get('tenant').id)).map(keyView) }, 200)
)

keysRoutes.openapi(
  createRoute({
    method: 'delete',
    path: '/{keyId}',
    tags: ['Keys'],
    summary: 'Revoke a key',
    description: 'Revokes one of your keys at once (the calling key included). Needs the owner’s key.',
    request: { params: KeyIdPath },
    responses: { 200: { description: 'Revoked', content: { 'application/json': { schema: AdminOk } } }, ...statusErrors([400, 401, 403, 404], NOT_OWNER) },
  }),
  async (c) => {
    const { keyId } = c.req.valid('param')
    const now = Date.now()
    if (!(await revokeApiKey(directory(c.env), keyId, now, c.get('tenant').id))) throw new ApiError(404, 'key_not_found', 'No live key with that id')
    await expireKeySubscriptions(c.var.db, c.get('tenant').id, keyId, now)
    // Revocation binds at once in this isolate, within the cache TTL elsewhere (as for the admin API).
    clearAuthCache()
    return c.json({ success: true as const }, 200)
  }
)
