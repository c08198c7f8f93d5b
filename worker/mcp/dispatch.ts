/**
 * Runs a tool: its arguments become the REST request of its row (path parameters, query, `body`), which goes
 * through the Worker's own Hono app in-process with the caller's key, so MCP and REST cannot disagree. The REST
 * validator judges the arguments; only what cannot be placed in a request at all is refused here, as the
 * protocol error 2025-06-18 prescribes for invalid arguments.
 */
import { ProtocolError, ProtocolErrorCode, type CallToolResult } from '@modelcontextprotocol/server'
import type { Tenant } from '../db/tenants'
import type { KeyGrant } from '../safety/grant'
import { vouchFor } from '../middleware/api-key'
import { IDEMPOTENCY_KEY_ARG, pathParams, type ToolSpec } from '../lib/tool-spec'

/** Answers a request the way the Worker does (`app.fetch` with this request's env and execution context). */
export type RestFetch = (request: Request) => Promise<Response>

export type Caller = {
  origin: string
  apiKey: string
  /** The tenant /mcp authenticated with apiKey; the REST app takes it instead of looking the key up again. */
  tenant: Tenant
  /** The key's grant: the REST app checks the tool's route against it, as for any REST call. */
  grant: KeyGrant
  signal: AbortSignal
  rest: RestFetch
}

const invalid = (tool: ToolSpec, message: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid arguments for ${tool.name}: ${message}`)

function scalar(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean') return String(value)
  return undefined
}

/** The REST request a tool call stands for; throws InvalidParams when the arguments cannot form one. */
export function restRequest(tool: ToolSpec, args: Record<string, unknown>, caller: Pick<Caller, 'origin' | 'apiKey' | 'signal'>): Request {
  const accepted = Object.keys(tool.input.shape)
  for (const key of Object.keys(args)) {
    if (!accepted.includes(key)) {
      const takes = accepted.length ? `it takes ${accepted.join(', ')}` : 'it takes no arguments'
      throw invalid(tool, `unknown argument "${key}"; ${takes}${accepted.includes('body') ? ' (request fields go inside body)' : ''}`)
    }
  }
  const inPath = pathParams(tool.path)
  let path = tool.path
  for (const name of inPath) {
    const value = scalar(args[name])
    if (!value) throw invalid(tool, `${name} is required`)
    path = path.replace(`{${name}}`, encodeURIComponent(value))
  }
  const query = new URLSearchParams()
  const idempotencyKey = accepted.includes(IDEMPOTENCY_KEY_ARG) ? scalar(args[IDEMPOTENCY_KEY_ARG]) : undefined
  for (const [key, value] of Object.entries(args)) {
    if (key === 'body' || key === IDEMPOTENCY_KEY_ARG || inPath.includes(key) || value === undefined || value === null) continue
    const text = scalar(value)
    if (text === undefined) throw invalid(tool, `${key} must be a string, number or boolean`)
    query.set(key, text)
  }
  const withBody = tool.method === 'POST' || tool.method === 'PUT'
  const headers = new Headers({ Authorization: `Bearer ${caller.apiKey}`, Accept: 'application/json' })
  if (withBody) headers.set('Content-Type', 'application/json')
  // A creating tool's idempotency_key is the REST route's Idempotency-Key: a retried call acts once.
  if (idempotencyKey !== undefined) headers.set('Idempotency-Key', idempotencyKey)
  const search = query.size ? `?${query}` : ''
  return new Request(`${caller.origin}/v1${path}${search}`, {
    method: tool.method,
    headers,
    // A POST or PUT always carries JSON, `{}` when the tool takes no body (spec 4.6 connect) or it was omitted.
    body: withBody ? JSON.stringify(args.body ?? {}) : undefined,
    signal: caller.signal,
  })
}

/** Spec 4.9: one text block, `HTTP <status>`, a newline, the REST JSON body; isError for any non-2xx status. */
export function toolResult(status: number, body: string): CallToolResult {
  return { content: [{ type: 'text', text: `HTTP ${status}\n${body}` }], isError: status < 200 || status > 299 }
}

export async function runTool(tool: ToolSpec, args: Record<string, unknown>, caller: Caller): Promise<CallToolResult> {
  const res = await caller.rest(vouchFor(restRequest(tool, args, caller), { tenant: caller.tenant, grant: caller.grant, tool: tool.name }))
  if (tool.answer) return tool.answer(res, args)
  return toolResult(res.status, await res.text())
}
