/**
 * Who may reach /mcp: the Origin check the MCP transport spec requires (with CORS for the browser clients it
 * admits), the refusal of a key in the URL (spec 5.3), and the API key in `X-API-Key` or `Authorization: Bearer`.
 */
import { cors } from 'hono/cors'
import { createMiddleware } from 'hono/factory'
import { mcpAllowedOrigins } from '../config'
import { API_KEY_PREFIX } from '../db/api-keys'
import { directory } from '../db/shards'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { actAs, authenticateKey, keyFromHeaders } from '../middleware/api-key'
import { authFailed, refuseThrottled } from '../middleware/auth-throttle'
import { keyClock } from '../middleware/key-scope'
import { isExpired } from '../safety/grant'

const CORS_MAX_AGE_S = 600

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

function loopback(url: string): boolean {
  try {
    return LOOPBACK_HOSTS.has(new URL(url).hostname)
  } catch {
    return false
  }
}

/**
 * Configured origins, plus loopback origins when this server is itself reached on a loopback address (issue 14 §5):
 * a browser-based MCP client on the same machine may connect to a local server, while a rebinding page keeps its
 * own (non-loopback) origin and Host. In production the Host is the public name, so only configured origins count.
 */
function originAllowed(env: Env, origin: string, requestUrl: string): boolean {
  const allowed = mcpAllowedOrigins(env)
  return allowed.any || allowed.origins.has(origin) || (loopback(requestUrl) && loopback(origin))
}

/** CORS for admitted browser origins; a refused origin gets no Access-Control-Allow-Origin, so the browser blocks it. */
export const mcpCors = cors({
  origin: (origin, c) => (origin && originAllowed(c.env as Env, origin, c.req.url) ? origin : null),
  allowMethods: ['POST'],
  // Mcp-Method and Mcp-Name: 2026-07-28 clients mirror the method and name of every request in them (SEP-2243).
  allowHeaders: ['Content-Type', 'Accept', 'Authorization', 'X-API-Key', 'Mcp-Protocol-Version', 'Mcp-Method', 'Mcp-Name'],
  exposeHeaders: ['WWW-Authenticate'],
  maxAge: CORS_MAX_AGE_S,
})

/**
 * DNS rebinding: a page on any site can make a browser send requests to a server it resolves to itself, with an
 * Origin that matches the Host it used, so only configured origins count. Requests without Origin come from
 * non-browser clients, which no web page can drive.
 */
export const originGuard = createMiddleware<AppEnv>(async function originGuard(c, next) {
  const origin = c.req.header('origin')
  if (origin && !originAllowed(c.env, origin, c.req.url)) {
    throw new ApiError(403, 'origin_not_allowed', `Origin ${origin} may not call this MCP server; add it to MCP_ALLOWED_ORIGINS to allow it`)
  }
  await next()
})

const KEY_PARAM = /^api[-_]?key$/i

/** Spec 5.3: a key in the URL ends up in logs and client histories, so it is refused even beside a valid header. */
export const refuseKeyInUrl = createMiddleware<AppEnv>(async function refuseKeyInUrl(c, next) {
  for (const [name, value] of new URL(c.req.url).searchParams) {
    if (KEY_PARAM.test(name) || value.startsWith(API_KEY_PREFIX)) {
      throw new ApiError(
        400,
        'key_in_url',
        'The MCP server does not take an API key in the URL: remove it and send the key in the X-API-Key header or as Authorization: Bearer <key>. A key that was put in a URL may have been logged; consider replacing it.'
      )
    }
  }
  await next()
})

export const mcpAuth = createMiddleware<AppEnv>(async function mcpAuth(c, next) {
  const key = keyFromHeaders(c.req.raw.headers)
  if (!key) throw new ApiError(401, 'unauthorized', 'An API key is required: send it in the X-API-Key header or as Authorization: Bearer <key>')
  refuseThrottled(c)
  const owner = await authenticateKey(directory(c.env), key)
  if (!owner) return authFailed(c, new ApiError(401, 'invalid_api_key', 'The API key is invalid or revoked'))
  const { tenant, grant } = owner
  c.set('apiKeyRef', owner.ref)
  // As for REST: a tenant whose only key this is cannot reach its tenant limit, so requestLimits skips that binding.
  c.set('tenantKeys', owner.tenantKeys)
  // REST answers 404 here (spec 4.1); on the MCP endpoint a 404 means "session expired" to clients, so 403.
  if (!tenant.apiEnabled) throw new ApiError(403, 'api_not_enabled', 'The API is not enabled for this account')
  if (isExpired(grant, keyClock.now())) throw new ApiError(403, 'key_expired', 'This key has expired; mint a new one with the owner’s key')
  actAs(c, tenant, grant)
  await next()
})
