/**
 * The common case of /mcp's era routing, decided without the SDK's classifier: a plain 2025-era request (the
 * revision header names a 2025-era revision or is absent, and the params carry no `_meta`). The SDK's
 * `classifyInboundRequest` reaches the same answer, but first tries the body as a JSON-RPC result and as an error
 * response, and a failed zod parse builds its issues: in a CPU profile of tools/call under wrangler dev the classifier
 * took a tenth of the isolate's time, more than any other step before the tool runs. Anything else (initialize, a notification, an
 * envelope, a modern header, a malformed message) is left to the classifier. test/worker/mcp/plain-request.test.ts
 * holds this to the classifier's answer over generated messages.
 */
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server'

/** The first stateless revision: every revision from it on routes to the modern handler. */
const FIRST_MODERN = '2026-07-28'
const LEGACY_REVISIONS = new Set(SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v < FIRST_MODERN))
/** A JSON-RPC request has exactly these members (the SDK's schema is strict); `params` is optional. */
const REQUEST_MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params'])

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Whether `body` is a JSON-RPC request the SDK would route to its 2025-era transport ("legacy", no claim). */
export function isPlainLegacyRequest(body: unknown, protocolVersionHeader: string | undefined): boolean {
  if (protocolVersionHeader !== undefined && !LEGACY_REVISIONS.has(protocolVersionHeader)) return false
  if (!isPlainObject(body) || Object.keys(body).some((k) => !REQUEST_MEMBERS.has(k))) return false
  const { jsonrpc, id, method, params } = body
  if (jsonrpc !== '2.0' || typeof method !== 'string' || method === 'initialize') return false
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return false
  return params === undefined || (isPlainObject(params) && params._meta === undefined)
}
