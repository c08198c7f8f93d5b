/**
 * The API description: the OpenAPI 3.1 header for GET /v1/openapi.json (the paths come from the zod routes) and the
 * interactive reference page for GET /docs (Scalar, served from the Worker's own static assets, no CDN).
 */
import type { OpenAPIHono } from '@hono/zod-openapi'
import type { OpenAPIObject, ReferenceObject } from 'openapi3-ts/oas31'
import { publicOrigin } from '../config'

const INTRO = [
  'A wire-only messaging gateway: send and receive through your own accounts (alpha, beta, SMS, page inbox, custom channel).',
  'Authenticate with your API key as `Authorization: Bearer`, `X-API-Key`, or the `apiKey` query parameter.',
  'Messaging and usage errors are `{error_code, error, retry_after_s?}`; auth, webhook and channel errors are `{success: false, error, error_code: <HTTP status>}`.',
  'Limits that protect your numbers (daily caps, new-contact cap, loop guard, opener burst, warm-up ramp) are enforced and cannot be switched off.',
  'Abuse limits answer 429 `rate_limited` with `Retry-After`: 6000 requests per 10 s per API key and 12000 per tenant (every operation),',
  '6000 custom-channel pushes per 10 s per tenant, 5 linking calls per minute per number and 20 per tenant, 3 pairing codes per minute per phone',
  'number across tenants, 10 beta login codes or passwords per minute per number, 10 webhook tests per minute per tenant, and 20',
  'failed authentications per minute per client address.',
  'Keys narrower than the owner’s (a scope, an account list, approval, an expiry) are refused with 403 `key_scope`, `key_account` or `key_expired` where the decision table says so (docs/agent-safety.md); connecting channels, webhooks, keys and approvals need the owner’s key.',
  'Request bodies are limited to 256 KiB (413 `body_too_large`) and are JSON: a body declared as a form or multipart is refused with 415, one sent with no Content-Type or as text/plain is read as JSON, one that does not parse answers 400.',
].join(' ')

export function openApiConfig(env: Env, requestUrl: string): OpenAPIObjectConfig {
  const origin = publicOrigin(env, requestUrl)
  return {
    openapi: '3.1.0',
    info: {
      title: 'Messaging Gateway API',
      version: '1.0.0',
      description: INTRO,
      // The API is the operator's service, not an open-source package: its terms are the operator's, shown on /docs.
      license: { name: 'Proprietary (the operator’s terms of service)', url: `${origin}/docs#terms` },
    },
    servers: [{ url: `${origin}/v1` }],
    security: [{ bearer: [] }, { apiKeyHeader: [] }, { apiKeyQuery: [] }],
  }
}

type OpenAPIObjectConfig = Parameters<OpenAPIHono['getOpenAPI31Document']>[0]
type Env_ = import('hono').Env

const VERB: Record<string, string> = { get: 'get', post: 'create', put: 'set', patch: 'update', delete: 'delete' }

/** An operation no tool maps to gets a name of the same style from its method and path (`get_openapi_json`). */
function derivedOperationId(method: string, path: string): string {
  const words = path
    .split('/')
    .filter((p) => p && !p.startsWith('{'))
    .map((p) => p.replace(/[^a-z0-9]+/gi, '_'))
  return [VERB[method] ?? method, ...words].join('_').toLowerCase()
}

/**
 * The OpenAPI document for client generators: every operation has an `operationId`. An operation that is an MCP
 * tool names itself after it (its route's operationId is the tool's name, lib/tool-spec.ts); any other gets one
 * derived from its method and path.
 */
export function apiDocument<E extends Env_>(api: OpenAPIHono<E>, config: OpenAPIObjectConfig): OpenAPIObject {
  const doc = api.getOpenAPI31Document(config)
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method]
      if (op && !op.operationId) op.operationId = derivedOperationId(method, path)
      // Every operation refuses a key the decision table does not allow (worker/safety/scopes.ts), in its 401's shape.
      const responses = op?.responses
      const unauthorized = responses?.['401']
      if (responses && !responses['403'] && unauthorized && !isRef(unauthorized)) responses['403'] = { description: KEY_REFUSED, content: unauthorized.content }
    }
  }
  return doc
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const
const KEY_REFUSED =
  'Refused for this key (docs/agent-safety.md): `key_scope` (the operation needs a wider key, or the owner’s), `key_account` (it touches an account the key does not list) or `key_expired`'
const isRef = (x: object): x is ReferenceObject => '$ref' in x
/** Where the page's scripts are served from: the Worker's static assets (wrangler.toml [assets], built by scripts/docs-assets.mjs). */
export const DOCS_ASSETS = { scalar: '/docs/scalar.js', start: '/docs/start.js' } as const

/**
 * The page's policy: scripts only from this origin (Scalar's bundle and the starter, no inline script, no eval),
 * the API called on this origin only (try-it and the document), Scalar's injected styles allowed inline.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

const esc = (s: string) => s.replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[ch]!)

/**
 * GET /docs: Scalar's API reference (@scalar/api-reference's standalone bundle, copied into the static assets by
 * scripts/docs-assets.mjs) on /v1/openapi.json, with the API-key schemes so try-it calls this gateway. Its settings
 * travel as a JSON data block, which no policy runs; docs/start.js reads them. No CDN, fonts or telemetry.
 */
export function docsPage(title: string): string {
  const config = JSON.stringify({
    url: '/v1/openapi.json',
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    hideClientButton: true,
    showDeveloperTools: 'never',
    // Scalar's own offers (SDKs and MCP from their service) have no place on an operator's reference.
    customCss: '.explore-scalar-cta{display:none}',
    showOperationId: true,
    documentDownloadType: 'json',
    authentication: { preferredSecurityScheme: 'bearer' },
  }).replace(/</g, '\\u003c')
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title></head><body>
<noscript><p>The reference needs JavaScript. The OpenAPI document itself: <a href="/v1/openapi.json">/v1/openapi.json</a>.</p></noscript>
<div id="app"></div>
<script type="application/json" id="docs-config">${config}</script>
<script src="${DOCS_ASSETS.scalar}"></script><script src="${DOCS_ASSETS.start}"></script>
</body></html>`
}
