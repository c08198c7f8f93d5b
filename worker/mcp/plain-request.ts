/**
 * The common cases of /mcp's checks, decided without zod.
 *
 * Era routing: a plain 2025-era request (the revision header names a 2025-era revision or is absent, and the params
 * carry no `_meta`) goes to the 2025-era transport without the SDK's `classifyInboundRequest`. The classifier reaches
 * the same answer, but first tries the body as a JSON-RPC result and as an error response, and each failed zod parse
 * builds its issues: in a CPU profile of tools/call under wrangler dev it took a tenth of the isolate's time, more
 * than any other step before the tool runs. Anything else (initialize, a notification, an envelope, a modern header,
 * a malformed message) is left to the classifier.
 *
 * Params: a tools/call whose params are only a name and an arguments object needs no check against the spec's
 * CallToolRequest schema before the SDK's own.
 *
 * test/worker/mcp/plain-request.test.ts holds both to the SDK's answers over generated messages.
 */
import { SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCRequest } from '@modelcontextprotocol/server'
import { isRecord, MODERN_PROTOCOL_VERSION } from './server'

/** The SDK's 2025-era revisions (every revision from the stateless one on routes to the modern handler). */
const LEGACY_REVISIONS = new Set(SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v < MODERN_PROTOCOL_VERSION))
/** A JSON-RPC request has exactly these members (the SDK's schema is strict); `params` is optional. */
const REQUEST_MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params'])

/** Whether `body` is a JSON-RPC request the SDK would route to its 2025-era transport ("legacy", no claim). */
export function isPlainLegacyRequest(body: unknown, protocolVersionHeader: string | undefined): body is JSONRPCRequest {
  if (protocolVersionHeader !== undefined && !LEGACY_REVISIONS.has(protocolVersionHeader)) return false
  if (!isRecord(body) || Object.keys(body).some((k) => !REQUEST_MEMBERS.has(k))) return false
  const { jsonrpc, id, method, params } = body
  if (jsonrpc !== '2.0' || typeof method !== 'string' || method === 'initialize') return false
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return false
  return params === undefined || (isRecord(params) && params._meta === undefined)
}

/** Whether a tools/call request's params are a string name and, optionally, an arguments object, and nothing else. */
export function isPlainToolCall(body: unknown): boolean {
  if (!isRecord(body) || body.method !== 'tools/call' || !isRecord(body.params)) return false
  const { name, arguments: args, ...rest } = body.params
  return typeof name === 'string' && (args === undefined || isRecord(args)) && Object.keys(rest).length === 0
}
