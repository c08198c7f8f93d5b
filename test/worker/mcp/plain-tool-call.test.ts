// worker/mcp/plain-tool-call.ts answers a plain tools/call exactly as the SDK's server does (buildServer on the
// one-request transport, the path every other plain request takes): the same status, content type and JSON-RPC body
// for results of every shape dispatch.ts builds, an unknown tool, and each kind of error a tool run can throw; and
// the tool sees the same arguments (`{}` when absent, an own `__proto__` dropped).
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type JSONRPCRequest } from '@modelcontextprotocol/server'
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { database } from '../../../worker/db/client'
import { getTenant } from '../../../worker/db/tenants'
import { toolResult } from '../../../worker/mcp/dispatch'
import { answerPlainRequest } from '../../../worker/mcp/json-answer-transport'
import { answerPlainToolCall } from '../../../worker/mcp/plain-tool-call'
import { isPlainToolCall } from '../../../worker/mcp/plain-request'
import { buildServer, pickCall, type ToolRunner } from '../../../worker/mcp/server'
import { fullGrant } from '../../../worker/safety/grant'
import { newTenant } from '../helpers'
import { mcpHttpRequest } from './rpc'

/** What each tool run does, chosen by its `mode` argument; every result also says which arguments the tool saw. */
const run: ToolRunner = async (tool, args) => {
  const saw = JSON.stringify({ tool: tool.name, keys: Object.keys(args), args })
  switch (args.mode) {
    case 'refused':
      return toolResult(404, JSON.stringify({ error: { code: 'not_found', message: 'no such message' } }))
    case 'image':
    case 'audio':
      return {
        content: [
          { type: 'text', text: `HTTP 200\n${saw}` },
          args.mode === 'image' ? { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' } : { type: 'audio', data: 'T2dnUw==', mimeType: 'audio/ogg' },
        ],
        isError: false,
      } satisfies CallToolResult
    case 'invalid':
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid arguments for ${tool.name}: accountId is required`)
    case 'broken':
      throw new Error('the REST call broke')
    case 'silent':
      throw new Error('')
    case 'coded':
      throw Object.assign(new Error('gone'), { code: -32002, data: { why: 'removed' } })
    case 'odd code':
      throw Object.assign(new Error('odd'), { code: 1.5 })
    case 'text':
      throw 'a thrown string'
    default:
      return toolResult(200, saw)
  }
}

async function viaSdk(message: JSONRPCRequest): Promise<Response> {
  const { tenantId } = await newTenant()
  const db = database(env.DB)
  const tenant = await getTenant(db, tenantId)
  if (!tenant) throw new Error('the test tenant is missing')
  const grant = fullGrant('')
  const server = buildServer(grant, run, {
    env,
    db,
    tenant,
    grant,
    requestUrl: 'https://gateway.test/mcp',
    clientGone: new AbortController().signal,
    now: Date.now,
  })
  return answerPlainRequest(server, message, mcpHttpRequest(message))
}

async function viaShortcut(message: JSONRPCRequest): Promise<Response> {
  const call = pickCall(message.params)
  if (!isPlainToolCall(message) || !call) throw new Error(`not a plain tools/call: ${JSON.stringify(message)}`)
  return answerPlainToolCall(message.id, call, run, new AbortController().signal)
}

/** Status, content type and body text: the bytes a client parses, key order included. */
const outcome = async (res: Response) => ({ status: res.status, type: res.headers.get('content-type'), body: await res.text() })

const calls: Array<[string, JSONRPCRequest['params']]> = [
  ['a result', { name: 'get_usage', arguments: {} }],
  ['a result, arguments absent', { name: 'list_accounts' }],
  ['a REST refusal (isError)', { name: 'get_message', arguments: { messageId: 'msg_1', mode: 'refused' } }],
  ['an image block', { name: 'get_media', arguments: { mediaId: 'med_1', mode: 'image' } }],
  ['an audio block', { name: 'get_media', arguments: { mediaId: 'med_2', mode: 'audio' } }],
  ['nested arguments', { name: 'send_message', arguments: { body: { account_id: 'acc_1', to: 'p', text: 'hi "there"\n', n: [1, 2.5, null] } } }],
  ['an own __proto__ argument', JSON.parse('{"name":"get_usage","arguments":{"__proto__":{"mode":"broken"},"x":1}}')],
  ['an unknown tool', { name: 'no_such_tool', arguments: {} }],
  ['an inherited name', { name: 'constructor', arguments: {} }],
  ['invalid arguments (a protocol error)', { name: 'get_message', arguments: { mode: 'invalid' } }],
  ['a thrown error', { name: 'get_usage', arguments: { mode: 'broken' } }],
  ['a thrown error without a message', { name: 'get_usage', arguments: { mode: 'silent' } }],
  ['a thrown error with a code and data', { name: 'get_usage', arguments: { mode: 'coded' } }],
  ['a thrown error with a code that is not an integer', { name: 'get_usage', arguments: { mode: 'odd code' } }],
  ['a thrown string', { name: 'get_usage', arguments: { mode: 'text' } }],
]

describe('a plain tools/call answered without an SDK server', () => {
  for (const [what, params] of calls) {
    for (const id of [7, 'call-7']) {
      it(`answers ${what} (id ${JSON.stringify(id)}) as the SDK's server does`, async () => {
        const message: JSONRPCRequest = { jsonrpc: '2.0', id, method: 'tools/call', params }
        const ours = await outcome(await viaShortcut(message))
        const sdk = await outcome(await viaSdk(message))
        expect(ours).toEqual(sdk)
        expect(ours.status).toBe(200)
        expect(JSON.parse(ours.body)).toMatchObject({ jsonrpc: '2.0', id })
      })
    }
  }
})
