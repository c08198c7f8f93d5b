// The shortcuts of /mcp's checks never disagree with the SDK: whatever they call a plain 2025-era request,
// classifyInboundRequest routes to the 2025-era transport too, and a plain tools/call fits the spec's CallToolRequest
// schema, over generated messages and headers.
import { classifyInboundRequest, specTypeSchemas, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isPlainLegacyRequest, isPlainToolCall } from '../../../worker/mcp/plain-request'
import { FUZZ } from '../fuzz/settings'

const header = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(...SUPPORTED_PROTOCOL_VERSIONS, '2026-07-28', '2099-01-01', ' 2025-06-18', '2025-06-18 ', 'garbage', '')
)
const meta = fc.oneof(
  fc.constant({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28' }),
  fc.constant({ 'io.modelcontextprotocol/protocolVersion': '2025-06-18' }),
  fc.constant({ progressToken: 1 }),
  fc.constant({}),
  fc.constant('x'),
  fc.constant(null)
)
const params = fc.oneof(
  fc.record({ name: fc.constantFrom('get_usage', 'list_accounts'), arguments: fc.constant({}) }),
  fc.record(
    {
      name: fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.constant(null)),
      arguments: fc.oneof(fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })), fc.constant(null), fc.constant([]), fc.constant('a')),
      task: fc.oneof(fc.constant({ ttl: 5 }), fc.constant('t')),
      extra: fc.constant(1),
    },
    { requiredKeys: [] }
  ),
  fc.record({ name: fc.constant('get_usage'), _meta: meta }),
  fc.record({ protocolVersion: fc.constantFrom('2025-06-18', '2026-07-28'), capabilities: fc.constant({}) }),
  fc.constant({}),
  fc.constant(null),
  fc.constant([]),
  fc.constant('params')
)
const message = fc.record(
  {
    jsonrpc: fc.constantFrom('2.0', '1.0', 2),
    id: fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.double(), fc.constant(2 ** 60), fc.constant(null), fc.boolean()),
    method: fc.oneof(fc.constantFrom('tools/call', 'tools/list', 'ping', 'initialize', 'notifications/initialized', 'events/stream'), fc.integer()),
    params,
    result: fc.constant({}),
    error: fc.constant({ code: -1, message: 'x' }),
    extra: fc.constant(1),
  },
  { requiredKeys: [] }
)
// Close to a plain request: every member but params present, each mostly valid, so both answers are reached.
const nearRequest = fc.record(
  {
    jsonrpc: fc.constantFrom('2.0', '2.0', '2.0', '1.0'),
    id: fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.integer(), fc.double(), fc.constant(2 ** 60), fc.constant(-0)),
    method: fc.constantFrom('tools/call', 'tools/list', 'ping', 'initialize', 'notifications/initialized', 'events/stream'),
    params,
  },
  { requiredKeys: ['jsonrpc', 'id', 'method'] }
)
const toolCall = fc.record({ jsonrpc: fc.constant('2.0'), id: fc.integer(), method: fc.constant('tools/call'), params })
// A plain tools/call with any name and arguments. The arms above reach the tool-call shortcut about one time in fifty,
// the coverage floor below, so a floor at that rate failed on an unlucky seed; with this arm it is reached about one
// time in eight, whatever seed `npm run fuzz` picks.
const plainToolCall = fc.record({
  jsonrpc: fc.constant('2.0'),
  id: fc.oneof(fc.string({ maxLength: 4 }), fc.integer()),
  method: fc.constant('tools/call'),
  params: fc.record(
    { name: fc.string({ maxLength: 6 }), arguments: fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 2 })) },
    { requiredKeys: ['name'] }
  ),
})
const body = fc.oneof(
  { arbitrary: message, weight: 4 },
  { arbitrary: nearRequest, weight: 4 },
  { arbitrary: toolCall, weight: 2 },
  { arbitrary: plainToolCall, weight: 2 },
  fc.constant([]),
  fc.constant(null),
  fc.constant('text'),
  fc.integer()
)

describe('isPlainLegacyRequest', () => {
  it('routes only what the SDK classifier also routes to the 2025-era transport', () => {
    let shortcut = 0
    let runs = 0
    fc.assert(
      fc.property(body, header, (b, h) => {
        runs++
        if (!isPlainLegacyRequest(b, h)) return
        shortcut++
        expect(classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader: h, body: b }).kind).toBe('legacy')
      }),
      // The fuzz suites' fixed seed: `npm test` is the same run every time; `npm run fuzz` (FUZZ_SEED) explores.
      { numRuns: 3000, seed: FUZZ.seed }
    )
    // The generator reaches the shortcut often enough for the property to mean something.
    expect(shortcut).toBeGreaterThan(runs / 20)
  })

  it('takes the messages a 2025-era client sends after initialize, and leaves the rest to the classifier', () => {
    const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_usage', arguments: {} } }
    expect(isPlainLegacyRequest(call, '2025-06-18')).toBe(true)
    expect(isPlainLegacyRequest({ jsonrpc: '2.0', id: 'a', method: 'tools/list' }, undefined)).toBe(true)
    expect(isPlainLegacyRequest(call, '2026-07-28')).toBe(false)
    expect(isPlainLegacyRequest({ ...call, method: 'initialize' }, '2025-06-18')).toBe(false)
    expect(isPlainLegacyRequest({ ...call, params: { ...call.params, _meta: {} } }, '2025-06-18')).toBe(false)
    expect(isPlainLegacyRequest({ jsonrpc: '2.0', method: 'notifications/initialized' }, '2025-06-18')).toBe(false)
  })
})

describe('isPlainToolCall', () => {
  it('passes only tools/call messages that the spec schema the handler checks would pass', async () => {
    let shortcut = 0
    let runs = 0
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        runs++
        if (!isPlainToolCall(b)) return
        shortcut++
        const check = await specTypeSchemas.CallToolRequest['~standard'].validate(b)
        expect(check.issues).toBeUndefined()
      }),
      // The fuzz suites' fixed seed: `npm test` is the same run every time; `npm run fuzz` (FUZZ_SEED) explores.
      { numRuns: 3000, seed: FUZZ.seed }
    )
    expect(shortcut).toBeGreaterThan(runs / 50)
  })

  it('takes a name and an arguments object, nothing else', () => {
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_usage', arguments: {} } }
    expect(isPlainToolCall(call)).toBe(true)
    expect(isPlainToolCall({ ...call, params: { name: 'get_usage' } })).toBe(true)
    expect(isPlainToolCall({ ...call, params: { name: 'get_usage', arguments: 'x' } })).toBe(false)
    expect(isPlainToolCall({ ...call, params: { name: 5, arguments: {} } })).toBe(false)
    expect(isPlainToolCall({ ...call, params: { name: 'get_usage', _meta: {} } })).toBe(false)
    expect(isPlainToolCall({ ...call, method: 'tools/list' })).toBe(false)
  })
})
