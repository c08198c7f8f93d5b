// worker/mcp/json-answer-transport.ts answers a plain request exactly as the SDK's own streamable transport does in
// JSON mode: the same status, content type and JSON-RPC body, for results, protocol errors, thrown errors, unknown
// methods and tools, and a handler that also sends a notification and a request to the client first (both dropped).
import { ProtocolError, ProtocolErrorCode, Server, WebStandardStreamableHTTPServerTransport, type JSONRPCRequest } from '@modelcontextprotocol/server'
import { describe, expect, it } from 'vitest'
import { answerPlainRequest } from '../../../worker/mcp/json-answer-transport'
import { mcpHttpRequest } from './rpc'

function server(): Server {
  const s = new Server({ name: 'test', version: '1.0.0' }, { capabilities: { tools: {}, logging: {} } })
  s.setRequestHandler('tools/list', () => ({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }))
  s.setRequestHandler('tools/call', async (request, ctx) => {
    const name = request.params.name
    if (name === 'echo') return { content: [{ type: 'text', text: JSON.stringify(request.params.arguments ?? {}) }] }
    if (name === 'chatty') {
      await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data: 'working' } })
      return { content: [{ type: 'text', text: 'done' }], isError: false }
    }
    if (name === 'broken') throw new Error('the tool broke')
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`)
  })
  return s
}

async function viaSdk(message: JSONRPCRequest): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
  await server().connect(transport)
  return transport.handleRequest(mcpHttpRequest(message), { parsedBody: message })
}

const outcome = async (res: Response) => ({ status: res.status, type: res.headers.get('content-type'), body: await res.json() })

const requests: JSONRPCRequest[] = [
  { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
  { jsonrpc: '2.0', id: 'two', method: 'tools/call', params: { name: 'echo', arguments: { a: 1, b: ['x'] } } },
  { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'chatty', arguments: {} } },
  { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'broken', arguments: {} } },
  { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'nope', arguments: {} } },
  { jsonrpc: '2.0', id: 6, method: 'ping' },
  { jsonrpc: '2.0', id: 7, method: 'resources/list', params: {} },
  { jsonrpc: '2.0', id: 8, method: 'no/such/method', params: {} },
]

describe('the one-request JSON transport', () => {
  for (const message of requests) {
    it(`answers ${message.method} (id ${message.id}) as the SDK's transport does`, async () => {
      const ours = await outcome(await answerPlainRequest(server(), message, mcpHttpRequest(message)))
      const sdk = await outcome(await viaSdk(message))
      expect(ours).toEqual(sdk)
      expect(ours.status).toBe(200)
      expect(ours.body).toMatchObject({ id: message.id })
    })
  }
})
