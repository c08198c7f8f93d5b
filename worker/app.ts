/**
 * The Worker's Hono app: REST under /v1 (one sub-app per resource, one per channel from the registry), the admin
 * API under /admin, MCP at /mcp, the relay endpoint under /relay, the channels' hosted pages and provider callbacks,
 * the OpenAPI document and its reference page, and one `onError` that renders every failure in the spec's two body
 * shapes.
 */
import { OpenAPIHono } from '@hono/zod-openapi'
import { bodyLimit } from 'hono/body-limit'
import { createMiddleware } from 'hono/factory'
import type { AppEnv, ErrorFamily } from './env'
import { plannedRoutes } from './channels/planned'
import { CHANNELS, channelBase } from './channels/registry'
import { ApiError, errorResponse, onError } from './errors'
import { adminToken } from './middleware/admin-token'
import { mcpRoutes } from './mcp/handler'
import { apiKeyAuth, clearAuthCache, keepingVouch } from './middleware/api-key'
import { MAX_BODY_BYTES } from './lib/abuse-limits'
import { MESSAGING_ROUTE_PREFIXES } from './lib/error-codes'
import { requestLimits } from './lib/rate-limit'
import { auditTrail } from './middleware/audit'
import { jsonByDefault } from './middleware/json-by-default'
import { idempotency } from './middleware/idempotency'
import { keyScope } from './middleware/key-scope'
import { mediaOriginOnly } from './middleware/media-origin'
import { accountActionRoutes } from './routes/account-actions'
import { rateLimitHeaders } from './middleware/rate-limit-headers'
import { accountsRoutes } from './routes/accounts'
import { adminRoutes } from './routes/admin'
import { adminMetricsRoutes } from './routes/admin-metrics'
import { adminRelayRoutes } from './routes/admin-relays'
import { adminShardRoutes } from './routes/admin-shards'
import { adminSecretRoutes } from './routes/admin-secrets'
import { approvalPageRoutes } from './routes/approval-page'
import { auditRoutes } from './routes/audit'
import { keysRoutes } from './routes/keys'
import { messageActionRoutes } from './routes/message-actions'
import { messageApprovalRoutes } from './routes/message-approvals'
import { apiDocument, DOCS_CSP, docsPage, openApiConfig } from './routes/docs'
import { mediaRoutes } from './routes/media'
import { mediaLinkRoutes } from './routes/media-link'
import { messagesRoutes } from './routes/messages'
import { relayRoutes } from './routes/relay'
import { usageRoutes } from './routes/usage'
import { webhooksRoutes } from './routes/webhooks'

/** Messaging and usage routes answer `{error_code: string, …}`; all others `{success: false, error_code: status}`. */
export function errorFamilyFor(path: string): ErrorFamily {
  return MESSAGING_ROUTE_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`)) ? 'messaging' : 'status'
}

/** Request bodies under /v1 and /admin stop at MAX_BODY_BYTES, streamed or not (lib/abuse-limits.ts says why). */
export { MAX_BODY_BYTES }
const limitBody = keepingVouch(
  bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw new ApiError(413, 'body_too_large', `The request body exceeds ${MAX_BODY_BYTES} bytes`)
    },
  })
)

const errorFamily = createMiddleware<AppEnv>(async function errorFamily(c, next) {
  c.set('errorFamily', errorFamilyFor(c.req.path))
  await next()
})

export const v1 = new OpenAPIHono<AppEnv>()
v1.get('/openapi.json', (c) => c.json(apiDocument(v1, openApiConfig(c.env, c.req.url))))
// Outermost, so the answer of every later step (a refusal included) carries the limits noted for the request.
v1.use('*', rateLimitHeaders, apiKeyAuth({ allowQuery: true }), requestLimits)
// A JSON body sent without its Content-Type (or as text/plain, fetch()'s default for a string) is read as JSON: after
// authentication (an in-process MCP call's vouch follows the request object), before everything that reads the body.
v1.use('*', keepingVouch(jsonByDefault))
// The audit trail wraps the scope check so refusals for the key are logged too (docs/agent-safety.md).
v1.use('*', auditTrail)
v1.use('*', keyScope('/v1'))
// Creating POSTs whose definition declares Idempotency-Key: a retry gets the first answer (docs/idempotency.md).
v1.use(
  '*',
  idempotency('/v1', () => v1.openAPIRegistry.definitions)
)
v1.route('/accounts', accountsRoutes)
v1.route('/accounts', accountActionRoutes)
v1.route('/usage', usageRoutes)
v1.route('/messages', messagesRoutes)
v1.route('/messages', messageApprovalRoutes)
v1.route('/messages', messageActionRoutes)
v1.route('/media', mediaRoutes)
v1.route('/keys', keysRoutes)
v1.route('/audit', auditRoutes)
for (const channel of CHANNELS) v1.route(channelBase(channel), channel.routes)
v1.route('/webhooks', webhooksRoutes)
// Last: answers 501 for operations whose channel is not built yet; any real route mounted above wins.
v1.route('/', plannedRoutes)
v1.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer svc_live_…' })
v1.openAPIRegistry.registerComponent('securitySchemes', 'apiKeyHeader', { type: 'apiKey', in: 'header', name: 'X-API-Key' })
v1.openAPIRegistry.registerComponent('securitySchemes', 'apiKeyQuery', { type: 'apiKey', in: 'query', name: 'apiKey' })

export const app = new OpenAPIHono<AppEnv>()
app.use('*', errorFamily, mediaOriginOnly)
app.onError(onError)
app.notFound((c) => errorResponse(c, new ApiError(404, 'not_found', `No route for ${c.req.method} ${c.req.path}`)))
app.get('/', (c) => c.redirect('/docs'))
app.get('/docs', (c) => c.html(docsPage('Messaging Gateway API'), 200, { 'Content-Security-Policy': DOCS_CSP }))
app.use('/admin/*', limitBody, adminToken)
// A public route that caps its own body (the phone's MMS webhook, up to 8 MiB) is left to that cap.
const ownBodyLimits = CHANNELS.flatMap((channel) => (channel.ownBodyLimit ? [channel.ownBodyLimit] : []))
app.use('/v1/*', (c, next) => (ownBodyLimits.some((path) => path.test(c.req.path)) ? next() : limitBody(c, next)))
// Any admin change (revocation, switches, plan, review) must not be hidden by this isolate's key cache.
app.use('/admin/*', async (c, next) => {
  await next()
  if (c.req.method !== 'GET') clearAuthCache()
})
app.route('/admin', adminRoutes)
app.route('/admin', adminShardRoutes)
app.route('/admin/metrics', adminMetricsRoutes)
app.route('/admin/relays', adminRelayRoutes)
app.route('/admin/secrets', adminSecretRoutes)
app.route('/relay', relayRoutes)
// Signed media links: no API key, the signature is the permission (worker/media/links.ts).
app.route('/media', mediaLinkRoutes())
// Provider callbacks and hosted pages authenticate by their own signature or token: mounted before /v1's key check.
for (const channel of CHANNELS) if (channel.publicRoutes) app.route('/', channel.publicRoutes)
app.route('/approvals', approvalPageRoutes)
app.route('/v1', v1)
// Every tool call runs its REST operation through this same app, in-process.
app.route(
  '/mcp',
  mcpRoutes((request, env, ctx) => app.fetch(request, env, ctx))
)
