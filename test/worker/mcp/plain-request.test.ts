// The shortcut of /mcp's era routing never disagrees with the SDK's classifier: whatever it calls a plain 2025-era
// request, classifyInboundRequest routes to the 2025-era transport too, over generated messages and headers.
import { classifyInboundRequest, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isPlainLegacyRequest } from '../../../worker/mcp/plain-request'

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
const body = fc.oneof(
  { arbitrary: message, weight: 4 },
  { arbitrary: nearRequest, weight: 4 },
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
      { numRuns: 3000 }
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
