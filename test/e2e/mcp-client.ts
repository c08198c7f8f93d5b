/**
 * The official MCP SDK client as the e2e suites use it: connected to the local server's /mcp with the given headers,
 * and a tool call taken apart into the REST answer it carries (`HTTP <status>\n<json>`).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { z } from 'zod'

export async function connectMcp(
  serverUrl: string,
  headers: Record<string, string>,
  query = ''
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${serverUrl}/mcp${query}`), { requestInit: { headers } })
  const client = new Client({ name: 'e2e-agent', version: '1.0.0' })
  await client.connect(transport)
  return { client, transport }
}

/** What a tool call answers, as both SDK generations' clients return it. */
const ToolAnswer = z.object({ content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })), isError: z.boolean().optional() })

/** Any MCP client (SDK 1.x or 2.x): both call tools the same way. */
export type ToolCaller = { callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown> }

/** Calls a tool and takes its `HTTP <status>\n<json>` text apart. */
export async function callTool<T = Record<string, unknown>>(client: ToolCaller, name: string, args: Record<string, unknown> = {}) {
  const result = ToolAnswer.parse(await client.callTool({ name, arguments: args }))
  const first = result.content[0]
  if (first?.type !== 'text' || first.text === undefined) throw new Error(`${name}: no text content`)
  const match = /^HTTP (\d{3})\n([\s\S]*)$/.exec(first.text)
  if (!match) throw new Error(`${name}: unexpected text ${first.text}`)
  return { status: Number(match[1]), json: JSON.parse(match[2]!) as T, isError: result.isError === true }
}
