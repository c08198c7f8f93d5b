/**
 * Helpers for the MCP Events tests: requests in either protocol era (2025-era plain JSON-RPC, or 2026-07-28 with the
 * per-request `_meta` envelope and mirrored headers), an SSE reader for `events/stream`, and keys minted with a scope.
 */
import { body, call, type TestTenant } from '../helpers'
import { MCP_ACCEPT, rpc, type RpcAnswer } from './rpc'

export const MODERN = '2026-07-28'

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'events-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/events': {} } },
}

let nextId = 1000

/** One 2026-07-28 request, as the SDK 2.x client sends it. */
export function modernPost(
  key: string,
  method: string,
  params: Record<string, unknown> = {},
  init: { signal?: AbortSignal; headers?: Record<string, string> } = {}
) {
  return call('/mcp', {
    method: 'POST',
    key,
    headers: {
      Accept: MCP_ACCEPT,
      'MCP-Protocol-Version': MODERN,
      'Mcp-Method': method,
      // SEP-2243: a tools/call names its tool in a header too.
      ...(method === 'tools/call' && typeof params.name === 'string' ? { 'Mcp-Name': params.name } : {}),
      ...init.headers,
    },
    json: { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: ENVELOPE } },
    signal: init.signal,
  })
}

export async function modernRpc(key: string, method: string, params: Record<string, unknown> = {}): Promise<RpcAnswer> {
  const res = await modernPost(key, method, params)
  const json = await body<{ result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } }>(res)
  return { status: res.status, headers: res.headers, result: json.result, error: json.error }
}

/** A JSON-RPC request in the chosen era. */
export function events(era: 'legacy' | 'modern', key: string, method: string, params: Record<string, unknown> = {}): Promise<RpcAnswer> {
  return era === 'modern' ? modernRpc(key, method, params) : rpc(key, method, params)
}

export type RpcMessage = { id?: number; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: unknown }

/** Reads JSON-RPC messages off an SSE response as they arrive. */
export function sseMessages(res: Response): { next(timeoutMs?: number): Promise<RpcMessage | undefined>; cancel(): Promise<void> } {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  const queue: RpcMessage[] = []
  let pending: Promise<ReadableStreamReadResult<string>> | undefined
  return {
    async next(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      while (queue.length === 0) {
        const left = deadline - Date.now()
        if (left <= 0) return undefined
        // A read that lost the race stays pending and is awaited next time, so no chunk is dropped.
        pending ??= reader.read()
        const chunk = await Promise.race([pending, new Promise<'late'>((r) => setTimeout(() => r('late'), left))])
        if (chunk === 'late') return undefined
        pending = undefined
        if (chunk.done) return undefined
        buffer += chunk.value
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const data = frame
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join('\n')
          if (data) queue.push(JSON.parse(data) as RpcMessage)
        }
      }
      return queue.shift()
    },
    async cancel() {
      await reader.cancel().catch(() => undefined)
    },
  }
}

/** A key of the tenant with a narrower grant (POST /v1/keys). */
export async function mintKey(t: TestTenant, grant: Record<string, unknown>): Promise<string> {
  return (await mintKeyWithId(t, grant)).key
}

export async function mintKeyWithId(t: TestTenant, grant: Record<string, unknown>): Promise<{ key: string; id: string }> {
  const res = await call('/v1/keys', { method: 'POST', key: t.key, json: grant })
  const json = await body<{ key: string; id: string }>(res)
  if (res.status !== 201) throw new Error(`mint failed: ${res.status} ${JSON.stringify(json)}`)
  return json
}

/** A Standard Webhooks secret as an MCP client makes one: `whsec_` + base64 of 32 random bytes. */
export function clientSecret(): string {
  let s = ''
  for (const b of crypto.getRandomValues(new Uint8Array(32))) s += String.fromCharCode(b)
  return `whsec_${btoa(s)}`
}
