/**
 * /mcp: MCP streamable HTTP (2025-06-18), stateless, JSON answers only. Each POST gets its own SDK server and
 * transport; GET (the optional SSE stream) and DELETE (session end) answer 405. Refusals before the transport
 * (origin, key in URL, auth, batch, protocol version) are JSON-RPC error objects, like the SDK's own 406 and 415.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { CallToolRequestSchema, InitializeRequestSchema, ListToolsRequestSchema, PingRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { Hono, type Context, type ExecutionContext } from 'hono'
import type * as z from 'zod/v4'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { keyFromHeaders } from '../middleware/api-key'
import { readCapped } from '../lib/read-capped'
import { requestLimits } from '../lib/rate-limit'
import { mcpAuth, mcpCors, originGuard, refuseKeyInUrl } from './access'
import { runTool } from './dispatch'
import { PROTOCOL_VERSION, buildServer } from './server'
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
 * The JSON-RPC message of a well-formed POST, read here to refuse batches (removed in 2025-06-18; the SDK would
 * still run them). A POST with the wrong Accept or Content-Type is left unread for the SDK to answer 406 or 415.
 */
async function readMessage(c: Context<AppEnv>): Promise<unknown> {
  if (!acceptsBoth(c.req.header('accept')) || !isJson(c.req.header('content-type'))) return undefined
  const tooLarge = () => new ApiError(413, 'body_too_large', `The request body exceeds ${MCP_MAX_BODY_BYTES} bytes`)
  if (Number(c.req.header('content-length') ?? 0) > MCP_MAX_BODY_BYTES) throw tooLarge()
  const bytes = await readCapped(c.req.raw.body, MCP_MAX_BODY_BYTES)
  if (bytes === null) throw tooLarge()
  let message: unknown
  try {
    message = JSON.parse(new TextDecoder().decode(bytes))
  } catch {
    throw new ApiError(400, 'parse_error', 'Parse error: the body is not valid JSON')
  }
  if (Array.isArray(message)) {
    throw new ApiError(400, 'batch_not_supported', `JSON-RPC batches are not part of MCP ${PROTOCOL_VERSION}: send one message per POST`)
  }
  return message
}

/** The requests this server handles, by method, with the SDK's own schemas for them. */
const REQUEST_SHAPES = new Map<string, z.ZodType>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
])

/**
 * A request whose params do not fit its method (`arguments` a string, `name` a number) answers -32602 Invalid params
 * naming the field. Left to the SDK, its schema check throws inside the handler and becomes -32603 Internal error
 * carrying the raw schema issues.
 */
function invalidParams(message: unknown): { id: string | number; error: { code: number; message: string } } | null {
  if (typeof message !== 'object' || message === null || !('method' in message) || !('id' in message)) return null
  const { id, method } = message
  const shape = typeof method === 'string' ? REQUEST_SHAPES.get(method) : undefined
  if ((typeof id !== 'string' && typeof id !== 'number') || !shape) return null
  const check = shape.safeParse(message)
  if (check.success) return null
  const issue = check.error.issues[0]
  const where = issue?.path.join('.') || 'params'
  return { id, error: { code: -32602, message: `Invalid params: ${where}: ${issue?.message ?? 'does not fit the method'}` } }
}

export function mcpRoutes(workerFetch: WorkerFetch): Hono<AppEnv> {
  const mcp = new Hono<AppEnv>()
  mcp.onError((err, c) => {
    if (err instanceof ApiError) return rpcError(c, err)
    console.error(JSON.stringify({ msg: 'mcp error', error: String(err), stack: err.stack }))
    return rpcError(c, new ApiError(500, 'internal_error', 'Internal error'))
  })
  mcp.use('*', mcpCors, originGuard)

  // No SSE stream and no sessions: the two MAY-405s of the transport spec.
  mcp.on(['GET', 'DELETE'], '/', (c) =>
    rpcError(c, new ApiError(405, 'method_not_allowed', `${c.req.method} is not supported: this stateless server answers POST with JSON only`), {
      Allow: 'POST',
    })
  )

  mcp.post('/', refuseKeyInUrl, mcpAuth, requestLimits, async (c) => {
    const version = c.req.header('mcp-protocol-version')
    if (version !== undefined && version !== PROTOCOL_VERSION) {
      throw new ApiError(400, 'unsupported_protocol_version', `Unsupported MCP-Protocol-Version ${version}; this server speaks ${PROTOCOL_VERSION}`)
    }
    const parsedBody = await readMessage(c)
    const invalid = invalidParams(parsedBody)
    if (invalid) return c.json({ jsonrpc: '2.0', ...invalid })
    // Guaranteed by mcpAuth. Tool calls carry the same key and the tenant it resolved to (see vouchFor).
    const apiKey = keyFromHeaders(c.req.raw.headers) ?? ''
    const tenant = c.get('tenant')
    const grant = c.get('key')
    const origin = new URL(c.req.url).origin
    const env = c.env
    const ctx = c.executionCtx
    const clientGone = c.req.raw.signal
    const server = buildServer(grant, (tool, args, signal) =>
      runTool(tool, args, {
        origin,
        apiKey,
        tenant,
        grant,
        // A client that disconnects mid-call ends the REST call too (a long wait frees its slot).
        signal: AbortSignal.any([signal, clientGone]),
        rest: async (request) => workerFetch(request, env, ctx),
      })
    )
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    await server.connect(transport)
    // Not closed afterwards: with JSON answers every handler has finished when the response exists, so close() would
    // only build a "Connection closed" error for no one (its stack capture was a tenth of the isolate's CPU per call)
    // and drop maps the garbage collector drops anyway.
    return transport.handleRequest(c.req.raw, { parsedBody })
  })

  mcp.all('/', (c) => rpcError(c, new ApiError(405, 'method_not_allowed', `${c.req.method} is not supported; use POST`), { Allow: 'POST' }))
  return mcp
}
