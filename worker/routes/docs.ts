/**
 * The API description: the OpenAPI 3.1 header for GET /v1/openapi.json (the paths come from the zod routes) and a
 * self-contained reference page for GET /docs, rendered on the server so it needs no CDN or script.
 */
import type { OpenAPIHono } from '@hono/zod-openapi'
import type { OpenAPIObject, OperationObject, ParameterObject, ReferenceObject, RequestBodyObject, ResponseObject } from 'openapi3-ts/oas31'
import { publicOrigin } from '../config'
import { TOOLS } from '../mcp/tools'

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
  'Request bodies are limited to 256 KiB (413 `body_too_large`) and are JSON: a body sent with another Content-Type is refused with 415, one that does not parse with 400.',
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

/** `GET /webhooks/{webhookId}` → the MCP tool that runs that operation, so REST and MCP share one vocabulary. */
const TOOL_FOR_OPERATION = new Map(TOOLS.map((t) => [`${t.method.toLowerCase()} ${t.path}`, t.name]))

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
 * The OpenAPI document for client generators: every operation has an `operationId`, the MCP tool name where a tool
 * maps to it (a route that names its own keeps it).
 */
export function apiDocument<E extends Env_>(api: OpenAPIHono<E>, config: OpenAPIObjectConfig): OpenAPIObject {
  const doc = api.getOpenAPI31Document(config)
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method]
      if (op && !op.operationId) op.operationId = TOOL_FOR_OPERATION.get(`${method} ${path}`) ?? derivedOperationId(method, path)
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

const esc = (s: unknown) => String(s ?? '').replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[ch]!)
const code = (s: string) => esc(s).replace(/`([^`]+)`/g, '<code>$1</code>')

function schemaText(schema: unknown): string {
  return esc(JSON.stringify(schema, null, 2))
}

export function docsPage(doc: OpenAPIObject): string {
  const ops: string[] = []
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op: OperationObject | undefined = item[method]
      if (!op) continue
      const params = (op.parameters ?? [])
        .filter((p): p is ParameterObject => !isRef(p))
        .map((p) => `<li><code>${esc(p.name)}</code> (${esc(p.in)}${p.required ? ', required' : ''}) ${code(p.description ?? '')}</li>`)
        .join('')
      const requestBody: RequestBodyObject | undefined = op.requestBody && !isRef(op.requestBody) ? op.requestBody : undefined
      const body = requestBody?.content['application/json']?.schema
      const responses = Object.entries(op.responses ?? {})
        .filter((e): e is [string, ResponseObject] => !isRef(e[1]))
        .map(
          ([status, r]) =>
            `<details><summary><b>${esc(status)}</b> ${code(r.description ?? '')}</summary><pre>${schemaText(r.content?.['application/json']?.schema ?? null)}</pre></details>`
        )
        .join('')
      ops.push(`<section id="${esc(method + path)}"><h3><span class="m ${esc(method)}">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code></h3>
<p><b>${esc(op.summary ?? '')}</b></p><p>${code(op.description ?? '')}</p>
${params ? `<h4>Parameters</h4><ul>${params}</ul>` : ''}${body ? `<h4>Request body</h4><details open><summary>JSON</summary><pre>${schemaText(body)}</pre></details>` : ''}
<h4>Responses</h4>${responses}</section>`)
    }
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.info.title)}</title><style>
body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:0 auto;padding:1rem;color:#1d2433}
h1{margin-bottom:0}section{border-top:1px solid #dde;padding:.5rem 0}code{background:#f2f4f8;padding:0 .25rem;border-radius:3px}
pre{background:#f6f8fa;padding:.5rem;overflow:auto;font-size:12px}.m{display:inline-block;min-width:4.5rem;text-align:center;border-radius:4px;color:#fff;font-size:13px;padding:.1rem .3rem}
.get{background:#2b7bb9}.post{background:#2f9e44}.put{background:#e67700}.delete{background:#c92a2a}.patch{background:#7048e8}
</style></head><body><h1>${esc(doc.info.title)}</h1><p>Base URL: <code>${esc(doc.servers?.[0]?.url ?? '/v1')}</code> · <a href="/v1/openapi.json">openapi.json</a></p><p id="terms">${esc(doc.info.license?.name ?? '')}</p>
<p>${code(doc.info.description ?? '')}</p>${ops.join('\n')}</body></html>`
}
