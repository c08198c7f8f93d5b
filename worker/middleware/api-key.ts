/**
 * API-key authentication (spec part 5). REST accepts the key in `Authorization: Bearer`, `X-API-Key` or the
 * `apiKey` query parameter; MCP passes `allowQuery: false` because a key in a URL leaks into logs and histories.
 */
import { createMiddleware } from 'hono/factory'
import { tenantForApiKey } from '../db/api-keys'
import { database } from '../db/client'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'

export function keyFromHeaders(headers: Headers): string | undefined {
  const auth = headers.get('authorization')
  const bearer = auth && /^Bearer\s+(.+)$/i.exec(auth.trim())?.[1]
  return bearer || headers.get('x-api-key')?.trim() || undefined
}

export function apiKeyAuth({ allowQuery }: { allowQuery: boolean }) {
  return createMiddleware<AppEnv>(async function apiKeyAuth(c, next) {
    const key = keyFromHeaders(c.req.raw.headers) ?? (allowQuery ? c.req.query('apiKey') : undefined)
    if (!key) throw new ApiError(401, 'unauthorized', 'An API key is required: send it as Authorization: Bearer <key> or X-API-Key')
    const tenant = await tenantForApiKey(database(c.env.DB), key)
    if (!tenant) throw new ApiError(401, 'unauthorized', 'The API key is invalid or revoked')
    // A tenant with the API switched off sees the API as absent (spec 4.1).
    if (!tenant.apiEnabled) throw new ApiError(404, 'api_not_enabled', 'The API is not enabled for this account')
    c.set('tenant', tenant)
    await next()
  })
}
