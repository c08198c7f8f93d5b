/**
 * Issue 14 §5 over MCP: every tool of the tool table, called through /mcp with arguments generated from its
 * tools/list input schema (valid, boundary, hostile, unknown and missing arguments), answers a JSON-RPC result whose
 * `HTTP <status>` is one its REST operation documents, in that operation's error shape; and hostile JSON-RPC
 * envelopes (malformed JSON, odd ids, params of every type, unknown methods, wrong headers) get a JSON-RPC error or
 * result. Never a 5xx, never a stack trace or internal name.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { toolDefinitions, toolNamed } from '../../../worker/mcp/tools'
import { body, call } from '../helpers'
import { MCP_ACCEPT } from '../mcp/rpc'
import { deepTenant, NARROW, type DeepTenant } from './deep-tenant'
import { ANY_BODY_OPERATION, ANY_OPERATION, judge, leaks } from './judge'
import { describeRequest, operationsOf, RAW_BODIES, resolverFor } from './operations'
import { hostile, input, UNICODE_EDGES, type Schema } from './schema-arbitrary'
import { fuzz, printTallies, tally } from './settings'

const doc = await body(await call('/v1/openapi.json'))
const operations = new Map(operationsOf(doc).map((op) => [`${op.method} ${op.path}`, op]))
const resolve = resolverFor(doc)
const TOOLS = toolDefinitions()

let tenant: DeepTenant

beforeAll(async () => {
  tenant = await deepTenant()
}, 60_000)

afterAll(() => printTallies('MCP tools: REST statuses answered'))

/** See rest.test.ts: a wait still open after this long is an answer in progress, abandoned on purpose. */
const LONG_POLL_CUT_MS = 1500

type Posted = { status: number; text: string } | undefined

async function post(message: string | Uint8Array, headers: Record<string, string> = {}, longPoll = false): Promise<Posted> {
  try {
    const res = await call('/mcp', {
      method: 'POST',
      headers: { Accept: MCP_ACCEPT, 'Content-Type': 'application/json', 'MCP-Protocol-Version': '2025-06-18', 'X-API-Key': tenant.t.key, ...headers },
      body: message,
      signal: longPoll ? AbortSignal.timeout(LONG_POLL_CUT_MS) : undefined,
    })
    return { status: res.status, text: await res.text() }
  } catch (err) {
    if (longPoll && err instanceof DOMException && err.name === 'TimeoutError') return undefined
    throw err
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A JSON-RPC answer: an error object, or a result; the HTTP status of /mcp itself is never a 5xx. */
function rpcProblems(answer: { status: number; text: string }): string[] {
  const problems: string[] = []
  if (answer.status >= 500) problems.push(`/mcp answered ${answer.status}`)
  const leaked = leaks(answer.text)
  if (leaked) problems.push(`the body shows "${leaked}"`)
  if (answer.status === 202 && answer.text === '') return problems
  let json: unknown
  try {
    json = JSON.parse(answer.text)
  } catch {
    return [...problems, 'the /mcp body is not JSON']
  }
  if (!isObject(json) || json.jsonrpc !== '2.0') return [...problems, 'the /mcp body is not a JSON-RPC message']
  if ('error' in json) {
    const e = json.error
    if (!isObject(e) || !Number.isInteger(e.code) || typeof e.message !== 'string') problems.push('malformed JSON-RPC error')
    // -32603 is the server failing; anything a client can send wrong has its own code (-32600, -32601, -32602, -32700).
    else if (e.code === -32603) problems.push(`JSON-RPC -32603 Internal error: ${String(e.message).slice(0, 200)}`)
  } else if (answer.status !== 200 || !isObject(json.result)) problems.push(`a ${answer.status} without a JSON-RPC error`)
  return problems
}

function fail(what: string, problems: string[], answer: { text: string }): never {
  throw new Error(`${what}\n${problems.join('\n')}\n  /mcp body: ${answer.text.slice(0, 500)}`)
}

/** Half the REST suite's runs per tool: each tool runs a REST operation that suite fuzzes already. */
const TOOL_SHARE = 0.5

/** Arguments for a tool: its schema's mix, arguments of other types, and unknown names beside valid ones. */
function argumentsFor(schema: Schema): fc.Arbitrary<unknown> {
  const ctx = { resolve, uris: tenant.uris, known: tenant.known, narrow: NARROW }
  return fc.oneof({ weight: 12, arbitrary: input(schema, ctx) }, { weight: 1, arbitrary: hostile })
}

describe('every MCP tool, fuzzed', () => {
  for (const tool of TOOLS) {
    it(`${tool.name} answers documented statuses of its REST operation`, async () => {
      const row = toolNamed(tool.name)!
      const op = operations.get(`${row.method} ${row.path}`)
      if (!op) throw new Error(`${tool.name}: no ${row.method} ${row.path} in the OpenAPI document`)
      let id = 0
      await fuzz(
        tool.name,
        argumentsFor(tool.inputSchema),
        async (args) => {
          const message = JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: tool.name, arguments: args } })
          const answer = await post(message, {}, tool.name === 'wait_for_messages')
          if (!answer) return
          const what = `tools/call ${tool.name} ${message.slice(0, 400)}`
          const problems = rpcProblems(answer)
          if (problems.length) fail(what, problems, answer)
          const json: unknown = JSON.parse(answer.text)
          if (isObject(json) && isObject(json.error)) tally(tool.name, Number(json.error.code))
          if (!isObject(json) || !isObject(json.result)) return
          const content = json.result.content
          const first = Array.isArray(content) && isObject(content[0]) ? content[0] : undefined
          const match = typeof first?.text === 'string' ? /^HTTP (\d{3})\n([\s\S]*)$/.exec(first.text) : null
          if (!match) fail(what, ['the tool result is not one `HTTP <status>` text block first'], answer)
          const rest = { status: Number(match[1]), contentType: 'application/json', text: match[2]! }
          tally(tool.name, rest.status)
          const statuses = op.body ? ANY_BODY_OPERATION : ANY_OPERATION
          const restProblems = judge(`/v1${row.path}`, rest, op.statuses, statuses)
          if (restProblems.length) fail(what, restProblems, answer)
        },
        TOOL_SHARE
      )
    })
  }
})

/** JSON-RPC messages no client should send, and some every client sends, with odd members. */
const ID = fc.oneof(fc.integer(), fc.constantFrom(null, -0, 1e308, 1.5, '', 'x'.repeat(10_000), ...UNICODE_EDGES), fc.jsonValue({ maxDepth: 2 }))
const METHOD = fc.constantFrom(
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'notifications/initialized',
  'notifications/cancelled',
  'resources/list',
  'prompts/list',
  'logging/setLevel',
  'completion/complete',
  'rpc.discover',
  '__proto__',
  '',
  ...UNICODE_EDGES
)
const PARAMS = fc.oneof(
  hostile,
  fc.record({ name: fc.oneof(fc.constantFrom(...TOOLS.map((t) => t.name)), hostile), arguments: hostile }, { requiredKeys: [] }),
  fc.record({ protocolVersion: hostile, capabilities: hostile, clientInfo: hostile }, { requiredKeys: [] })
)
const ENVELOPE = fc.record(
  { jsonrpc: fc.oneof(fc.constant('2.0'), hostile), id: ID, method: fc.oneof(METHOD, hostile), params: PARAMS, extra: hostile },
  { requiredKeys: [] }
)
const HEADERS = fc.record(
  {
    Accept: fc.constantFrom('application/json', 'text/event-stream', '*/*', '', MCP_ACCEPT),
    'Content-Type': fc.constantFrom('text/plain', 'application/json; charset=utf-16', 'APPLICATION/JSON', ''),
    'MCP-Protocol-Version': fc.constantFrom('2025-03-26', '2024-11-05', '9999-99-99', '', 'x'.repeat(1000)),
    'X-API-Key': fc.constantFrom('', 'svc_live_', `svc_live_${'a'.repeat(5000)}`),
  },
  { requiredKeys: [] }
)

describe('POST /mcp, fuzzed', () => {
  it('answers hostile JSON-RPC envelopes and headers with a JSON-RPC error or result, never a 5xx', async () => {
    const message = fc.oneof(
      { weight: 6, arbitrary: ENVELOPE.map((e) => JSON.stringify(e)) },
      { weight: 2, arbitrary: fc.constantFrom(...RAW_BODIES) },
      { weight: 1, arbitrary: fc.array(ENVELOPE, { maxLength: 3 }).map((batch) => JSON.stringify(batch)) }
    )
    await fuzz(
      'POST /mcp',
      fc.tuple(message, fc.option(HEADERS, { nil: undefined, freq: 3 })),
      async ([text, headers]) => {
        const answer = await post(text, headers ?? {}, true)
        if (!answer) return
        tally('POST /mcp (envelopes)', answer.status)
        const problems = rpcProblems(answer)
        const req = { method: 'POST', url: '/mcp', headers: headers ?? {}, body: text, mangled: false }
        if (problems.length) fail(describeRequest(req), problems, answer)
      },
      4
    )
  })
})
