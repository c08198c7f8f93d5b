/**
 * /mcp: MCP Streamable HTTP, stateless, in both protocol eras (docs/mcp.md). A 2025-era request (an `initialize`
 * handshake, then plain JSON-RPC) gets its own server; a plain request goes on the one-request JSON transport
 * (json-answer-transport.ts), anything else on the SDK's streamable transport, answering JSON (an `events/stream`
 * answers SSE). A 2026-07-28 request (per-request `_meta`, `server/discover`) goes to the SDK's
 * `createMcpHandler`, which runs the revision's checks and answers JSON, or SSE once a handler streams. GET and
 * DELETE (the 2025 standalone stream and session end, gone in 2026-07-28) answer 405. Refusals before the SDK
 * (origin, key in URL, auth, batch, malformed params) are JSON-RPC error objects, like the SDK's own 406 and 415.
 */
import {
  classifyInboundRequest,
  createMcpHandler,
  specTypeSchemas,
  WebStandardStreamableHTTPServerTransport,
  type Server,
  type StandardSchemaV1,
} from '@modelcontextprotocol/server'
import { Hono, type Context, type ExecutionContext } from 'hono'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { keyFromHeaders } from '../middleware/api-key'
import { readCapped } from '../lib/read-capped'
import { requestLimits } from '../lib/rate-limit'
import { mcpAuth, mcpCors, originGuard, refuseKeyInUrl } from './access'
import { runTool } from './dispatch'
import { answerPlainRequest } from './json-answer-transport'
import { isPlainLegacyRequest, isPlainToolCall } from './plain-request'
import { buildServer, pickCall } from './server'
import { answerPlainToolCall } from './plain-tool-call'
import type { ToolSpec } from '../lib/tool-spec'
import { MCP_MAX_BODY_BYTES } from '../lib/abuse-limits'

/** The Worker's own fetch (the Hono app), through which every tool runs its REST operation. */
export type WorkerFetch = (request: Request, env: Env, ctx: ExecutionContext) => Response | Promise<Response>

export { MCP_MAX_BODY_BYTES }

const RPC_CODES: Record<string, number> = { parse_error: -32700, batch_not_supported: -32600 }

function rpcError(c: Context<AppEnv>, err: ApiError, headers: Record<string, string> = {}): Response {
  if (err.status === 401) {
    headers['WWW-Authenticate'] = err.code === 'invalid_api_key' ? 'Bearer realm="gateway", error="invalid_token"' : 'Bearer realm="gateway"'
  }
  const body = { jsonrpc: '2.0', error: { code: RPC_CODES[err.code] ?? -32000, message: err.message, data: { error_code: err.code } }, id: null }
  return c.json(body, err.status, headers)
}

const isJson = (contentType: string | undefined) => contentType?.split(';')[0]?.trim().toLowerCase() === 'application/json'
const acceptsBoth = (accept: string | undefined) => !!accept?.includes('application/json') && accept.includes('text/event-stream')

/**
 * The body as text, or null past MCP_MAX_BODY_BYTES. A body whose length was declared (and checked against the cap)
 * is read whole, as hono's bodyLimit trusts it: the HTTP parser delivers exactly that many bytes. Only a chunked
 * body is read chunk by chunk to stop at the cap: a JS reader loop that took a tenth of the isolate's time in a CPU
 * profile of tools/call, where the whole-body read is native.
 */
async function bodyText(request: Request, lengthDeclared: boolean): Promise<string | null> {
  if (lengthDeclared) return request.text()
  const bytes = await readCapped(request.body, MCP_MAX_BODY_BYTES)
  return bytes === null ? null : new TextDecoder().decode(bytes)
}

/**
 * The JSON-RPC message of a well-formed POST, read here to refuse batches (removed in 2025-06-18; the SDK would
 * still run them). A POST with the wrong Accept or Content-Type is left unread for the SDK to answer 406 or 415.
 */
async function readMessage(c: Context<AppEnv>): Promise<unknown> {
  if (!acceptsBoth(c.req.header('accept')) || !isJson(c.req.header('content-type'))) return undefined
  const tooLarge = () => new ApiError(413, 'body_too_large', `The request body exceeds ${MCP_MAX_BODY_BYTES} bytes`)
  const declared = c.req.header('content-length')
  if (Number(declared ?? 0) > MCP_MAX_BODY_BYTES) throw tooLarge()
  const text = await bodyText(c.req.raw, declared !== undefined && c.req.header('transfer-encoding') === undefined)
  if (text === null) throw tooLarge()
  let message: unknown
  try {
    message = JSON.parse(text)
  } catch {
    throw new ApiError(400, 'parse_error', 'Parse error: the body is not valid JSON')
  }
  if (Array.isArray(message)) {
    throw new ApiError(400, 'batch_not_supported', 'JSON-RPC batches are not part of MCP since 2025-06-18: send one message per POST')
  }
  return message
}

/**
 * The requests whose params the SDK would only check inside the handler, by method, with the SDK's own schemas.
 * `initialize` and `ping` exist in the 2025 era only: a 2026-07-28 request for them is the SDK's 404 -32601.
 */
const REQUEST_SHAPES = new Map<string, StandardSchemaV1>([
  ['tools/list', specTypeSchemas.ListToolsRequest],
  ['tools/call', specTypeSchemas.CallToolRequest],
])
const LEGACY_REQUEST_SHAPES = new Map<string, StandardSchemaV1>([
  ...REQUEST_SHAPES,
  ['initialize', specTypeSchemas.InitializeRequest],
  ['ping', specTypeSchemas.PingRequest],
])

const keyOf = (segment: PropertyKey | { key: PropertyKey }) => String(typeof segment === 'object' ? segment.key : segment)

/**
 * A request whose params do not fit its method (`arguments` a string, `name` a number) answers -32602 Invalid params
 * naming the field. Left to the SDK, its schema check throws inside the handler and becomes -32603 Internal error
 * carrying the raw schema issues.
 */
async function invalidParams(
  message: unknown,
  shapes: Map<string, StandardSchemaV1>
): Promise<{ id: string | number; error: { code: number; message: string } } | null> {
  if (typeof message !== 'object' || message === null || !('method' in message) || !('id' in message) || isPlainToolCall(message)) return null
  const { id, method } = message
  const shape = typeof method === 'string' ? shapes.get(method) : undefined
  if ((typeof id !== 'string' && typeof id !== 'number') || !shape) return null
  const check = await shape['~standard'].validate(message)
  if (!check.issues) return null
  const issue = check.issues[0]
  const where = issue?.path?.map(keyOf).join('.') || 'params'
  return { id, error: { code: -32602, message: `Invalid params: ${where}: ${issue?.message ?? 'does not fit the method'}` } }
}

/** The server a request is served by, keyed by the request itself: the shared modern handler calls back for it. */
const serverFor = new WeakMap<Request, () => Server>()

/**
 * 2026-07-28 traffic: one handler per isolate (it keeps nothing between requests but its own bookkeeping); the
 * factory builds the request's server from the context registered under the request.
 */
const modernHandler = createMcpHandler(
  (ctx) => {
    const make = ctx.requestInfo && serverFor.get(ctx.requestInfo)
    if (!make) throw new Error('no MCP server registered for this request')
    return make()
  },
  { legacy: 'reject', responseMode: 'auto', maxRequestBodySize: MCP_MAX_BODY_BYTES }
)

/** Whether a parsed message is the one request answered with a stream in the 2025 era too. */
const isStreamRequest = (message: unknown) => typeof message === 'object' && message !== null && 'method' in message && message.method === 'events/stream'

/** A 2025-era request: its own server and stateless transport; JSON answers, but a stream for `events/stream`. */
async function serveLegacy(server: Server, request: Request, message: unknown): Promise<Response> {
  const streaming = isStreamRequest(message)
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !streaming })
  await server.connect(transport)
  // Not closed after a JSON answer: every handler has finished when the response exists, so close() would only build
  // a "Connection closed" error for no one. A stream is closed with its client (the handler stops on its own signal).
  if (streaming) request.signal.addEventListener('abort', () => void server.close().catch(() => undefined), { once: true })
  return transport.handleRequest(request, { parsedBody: message })
}

export function mcpRoutes(workerFetch: WorkerFetch): Hono<AppEnv> {
  const mcp = new Hono<AppEnv>()
  mcp.onError((err, c) => {
    if (err instanceof ApiError) return rpcError(c, err)
    console.error(JSON.stringify({ msg: 'mcp error', error: String(err), stack: err.stack }))
    return rpcError(c, new ApiError(500, 'internal_error', 'Internal error'))
  })
  mcp.use('*', mcpCors, originGuard)

  // No standalone SSE stream and no sessions: the two MAY-405s of 2025-era transports, the rule of 2026-07-28.
  mcp.on(['GET', 'DELETE'], '/', (c) =>
    rpcError(c, new ApiError(405, 'method_not_allowed', `${c.req.method} is not supported: this stateless server answers POST only`), {
      Allow: 'POST',
    })
  )

  mcp.post('/', refuseKeyInUrl, mcpAuth, requestLimits, async (c) => {
    const parsedBody = await readMessage(c)
    const protocolVersionHeader = c.req.header('mcp-protocol-version')
    const plain = parsedBody !== undefined && isPlainLegacyRequest(parsedBody, protocolVersionHeader) ? parsedBody : null
    const route =
      parsedBody === undefined || plain
        ? 'legacy'
        : classifyInboundRequest({
            httpMethod: 'POST',
            protocolVersionHeader,
            mcpMethodHeader: c.req.header('mcp-method'),
            mcpNameHeader: c.req.header('mcp-name'),
            body: parsedBody,
          }).kind
    // The commonest request, a plain tools/call, is answered without an SDK server (plain-tool-call.ts says why).
    const call = plain && isPlainToolCall(plain) ? pickCall(plain.params) : null
    const invalid = call ? null : await invalidParams(parsedBody, route === 'legacy' ? LEGACY_REQUEST_SHAPES : REQUEST_SHAPES)
    if (invalid) return c.json({ jsonrpc: '2.0', ...invalid })
    // Guaranteed by mcpAuth. Tool calls carry the same key and the tenant it resolved to (see vouchFor).
    const apiKey = keyFromHeaders(c.req.raw.headers) ?? ''
    const tenant = c.get('tenant')
    const grant = c.get('key')
    const requestUrl = c.req.url
    const origin = new URL(requestUrl).origin
    const env = c.env
    const ctx = c.executionCtx
    const clientGone = c.req.raw.signal
    const run = (tool: ToolSpec, args: Record<string, unknown>, signal: AbortSignal) =>
      runTool(tool, args, { origin, apiKey, tenant, grant, signal, rest: async (request) => workerFetch(request, env, ctx) })
    // A client that disconnects mid-call ends the REST call too (a long wait frees its slot).
    if (plain && call) return answerPlainToolCall(plain.id, call, run, clientGone)
    const make = () =>
      buildServer(grant, (tool, args, signal) => run(tool, args, AbortSignal.any([signal, clientGone])), {
        env,
        db: c.var.db,
        tenant,
        grant,
        requestUrl,
        clientGone,
        now: Date.now,
      })
    if (plain && !isStreamRequest(plain)) return answerPlainRequest(make(), plain, c.req.raw)
    if (route === 'legacy') return serveLegacy(make(), c.req.raw, parsedBody)
    serverFor.set(c.req.raw, make)
    return modernHandler.fetch(c.req.raw, { parsedBody })
  })

  mcp.all('/', (c) => rpcError(c, new ApiError(405, 'method_not_allowed', `${c.req.method} is not supported; use POST`), { Allow: 'POST' }))
  return mcp
}
