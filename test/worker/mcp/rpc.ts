/** Helpers for the MCP tests: raw JSON-RPC POSTs to /mcp as a streamable-HTTP client sends them, and tool calls. */
import { expect } from 'vitest'
import { body, call, type KeyPlace } from '../helpers'

export const MCP_ACCEPT = 'application/json, text/event-stream'

export type RpcOptions = { key?: string; keyPlace?: KeyPlace; headers?: Record<string, string>; path?: string; signal?: AbortSignal }

/** POSTs one JSON-RPC message (or anything else) to /mcp. */
export function mcpPost(message: unknown, opts: RpcOptions = {}): Promise<Response> {
  return call(opts.path ?? '/mcp', {
    method: 'POST',
    key: opts.key,
    keyPlace: opts.keyPlace ?? 'header',
    headers: { Accept: MCP_ACCEPT, 'MCP-Protocol-Version': '2025-06-18', ...opts.headers },
    json: message,
    signal: opts.signal,
  })
}

/** A 2025-era POST of one JSON-RPC message as a Request object, for handing to a transport directly (not through the app). */
export const mcpHttpRequest = (message: unknown) =>
  new Request('https://gateway.test/mcp', {
    method: 'POST',
    headers: { Accept: MCP_ACCEPT, 'Content-Type': 'application/json', 'MCP-Protocol-Version': '2025-06-18' },
    body: JSON.stringify(message),
  })

let nextId = 1

export type RpcAnswer = { status: number; headers: Headers; result?: Record<string, unknown>; error?: { code: number; message: string } }

export async function rpc(key: string, method: string, params: Record<string, unknown> = {}, opts: RpcOptions = {}): Promise<RpcAnswer> {
  const id = nextId++
  const res = await mcpPost({ jsonrpc: '2.0', id, method, params }, { key, ...opts })
  const json = await body<{ id: number; result?: Record<string, unknown>; error?: { code: number; message: string } }>(res)
  if (res.status === 200) expect(json.id).toBe(id)
  return { status: res.status, headers: res.headers, result: json.result, error: json.error }
}

export type ToolAnswer = { status: number; json: Record<string, unknown>; text: string; isError: boolean }

/** tools/call, with the `HTTP <status>\n<json>` text taken apart. Fails the test on a JSON-RPC error. */
export async function callTool(key: string, name: string, args: Record<string, unknown> = {}, opts: RpcOptions = {}): Promise<ToolAnswer> {
  const answer = await rpc(key, 'tools/call', { name, arguments: args }, opts)
  expect(answer.error, JSON.stringify(answer.error)).toBeUndefined()
  const result = answer.result as { content: { type: string; text: string }[]; isError: boolean }
  expect(result.content).toHaveLength(1)
  expect(result.content[0]!.type).toBe('text')
  const text = result.content[0]!.text
  const match = /^HTTP (\d{3})\n([\s\S]*)$/.exec(text)
  expect(match, text).not.toBeNull()
  return { status: Number(match![1]), json: JSON.parse(match![2]!), text, isError: result.isError }
}
