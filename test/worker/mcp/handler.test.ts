// /mcp as a streamable-HTTP endpoint: the lifecycle, the HTTP methods, the guards before the transport, and auth.
import { describe, expect, it } from 'vitest'
import { admin, body, call, newTenant } from '../helpers'
import { MCP_ACCEPT, mcpPost, rpc } from './rpc'

const INIT = {
  protocolVersion: '2025-06-18',
  capabilities: {},
  clientInfo: { name: 'test-client', version: '0.0.1' },
}

describe('POST /mcp initialize', () => {
  it('answers protocol 2025-06-18, the tools capability, the server info and the agent instructions, with no session', async () => {
    const t = await newTenant()
    const answer = await rpc(t.key, 'initialize', INIT)
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/)
    expect(answer.headers.get('mcp-session-id')).toBeNull()
    const result = answer.result as { protocolVersion: string; capabilities: Record<string, unknown>; serverInfo: unknown; instructions: string }
    expect(result.protocolVersion).toBe('2025-06-18')
    expect(result.capabilities.tools).toBeDefined()
    expect(result.serverInfo).toEqual({ name: 'messaging-gateway', title: 'Messaging Gateway', version: '1.0.0' })
    // Spec 4.9's instructions, word for word.
    for (const rule of [
      'start with list_accounts',
      'listen with wait_for_messages',
      'reply with send_message',
      'ask the user before messaging anyone',
      'answer only people who wrote first or whom the user asked to contact',
    ]) {
      expect(result.instructions).toContain(rule)
    }
  })

  it('answers the 2025-era revision a client asks for, and 2025-06-18 to one it does not know', async () => {
    const t = await newTenant()
    for (const protocolVersion of ['2025-11-25', '2025-03-26', '2024-11-05']) {
      const answer = await rpc(t.key, 'initialize', { ...INIT, protocolVersion }, { headers: {} })
      expect((answer.result as { protocolVersion: string }).protocolVersion).toBe(protocolVersion)
    }
    // 2026-07-28 is never negotiated by initialize (it has none: server/discover instead).
    for (const protocolVersion of ['2099-01-01', '2026-07-28']) {
      const answer = await rpc(t.key, 'initialize', { ...INIT, protocolVersion }, { headers: {} })
      expect((answer.result as { protocolVersion: string }).protocolVersion).toBe('2025-06-18')
    }
  })

  it('advertises the Events extension beside the tools', async () => {
    const t = await newTenant()
    const answer = await rpc(t.key, 'initialize', INIT)
    expect((answer.result as { capabilities: unknown }).capabilities).toEqual({
      tools: {},
      extensions: { 'io.modelcontextprotocol/events': {} },
      events: {},
    })
  })

  it('accepts notifications/initialized with 202 and no body', async () => {
    const t = await newTenant()
    const res = await mcpPost({ jsonrpc: '2.0', method: 'notifications/initialized' }, { key: t.key })
    expect(res.status).toBe(202)
    expect(await res.text()).toBe('')
  })

  it('answers ping, and -32601 for an unknown method', async () => {
    const t = await newTenant()
    expect((await rpc(t.key, 'ping')).result).toEqual({})
    const unknown = await rpc(t.key, 'resources/list')
    expect(unknown.error?.code).toBe(-32601)
  })
})

describe('POST /mcp transport rules', () => {
  it('refuses a JSON-RPC batch with 400 -32600 (batching was removed in 2025-06-18)', async () => {
    const t = await newTenant()
    const res = await mcpPost([{ jsonrpc: '2.0', id: 1, method: 'ping' }], { key: t.key })
    expect(res.status).toBe(400)
    expect(await body(res)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } })
  })

  it('refuses a body that is not JSON with 400 -32700', async () => {
    const t = await newTenant()
    const res = await call('/mcp', {
      method: 'POST',
      body: '{"jsonrpc":',
      headers: { 'X-API-Key': t.key, Accept: MCP_ACCEPT, 'Content-Type': 'application/json' },
    })
    expect(res.status).toBe(400)
    expect(await body(res)).toMatchObject({ error: { code: -32700 } })
  })

  it('refuses a body over 1 MiB with 413', async () => {
    const t = await newTenant()
    const res = await mcpPost({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(1024 * 1024) } }, { key: t.key })
    expect(res.status).toBe(413)
  })

  // A body without Content-Length is read chunk by chunk and cut off at the cap; one within it is served as usual.
  it('reads a chunked body (no Content-Length) up to the cap: 413 past it, the answer within it', async () => {
    const t = await newTenant()
    const chunked = (message: unknown) => {
      const bytes = new TextEncoder().encode(JSON.stringify(message))
      const half = bytes.length >> 1
      return new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.subarray(0, half))
          controller.enqueue(bytes.subarray(half))
          controller.close()
        },
      })
    }
    const post = (message: unknown) =>
      call('/mcp', {
        method: 'POST',
        body: chunked(message),
        headers: { 'X-API-Key': t.key, Accept: MCP_ACCEPT, 'Content-Type': 'application/json', 'MCP-Protocol-Version': '2025-06-18' },
      })
    const over = await post({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(1024 * 1024) } })
    expect(over.status).toBe(413)
    const within = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_usage', arguments: {} } })
    expect(within.status).toBe(200)
    expect(await body(within)).toMatchObject({ jsonrpc: '2.0', id: 2, result: { isError: false } })
  })

  it('leaves a wrong Accept or Content-Type to the SDK: 406 and 415', async () => {
    const t = await newTenant()
    const notAcceptable = await mcpPost({ jsonrpc: '2.0', id: 1, method: 'ping' }, { key: t.key, headers: { Accept: 'application/json' } })
    expect(notAcceptable.status).toBe(406)
    const unsupported = await call('/mcp', {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      headers: { 'X-API-Key': t.key, Accept: MCP_ACCEPT, 'Content-Type': 'text/plain' },
    })
    expect(unsupported.status).toBe(415)
  })

  it('refuses an MCP-Protocol-Version it does not speak with 400 naming the ones it does, and takes a request without the header', async () => {
    const t = await newTenant()
    for (const version of ['2025-03-26', '2025-06-18', '2025-11-25']) {
      expect((await rpc(t.key, 'ping', {}, { headers: { 'MCP-Protocol-Version': version } })).status).toBe(200)
    }
    const old = await rpc(t.key, 'ping', {}, { headers: { 'MCP-Protocol-Version': '1999-01-01' } })
    expect(old.status).toBe(400)
    expect(old.error?.message).toContain('2025-06-18')
    const res = await call('/mcp', {
      method: 'POST',
      key: t.key,
      keyPlace: 'header',
      headers: { Accept: MCP_ACCEPT },
      json: { jsonrpc: '2.0', id: 1, method: 'ping' },
    })
    expect(res.status).toBe(200)
  })
})

describe('GET, DELETE and other methods on /mcp', () => {
  it('answers GET and DELETE with 405 and Allow: POST, with or without a key', async () => {
    const t = await newTenant()
    for (const method of ['GET', 'DELETE']) {
      for (const key of [undefined, t.key]) {
        const res = await call('/mcp', { method, key, keyPlace: 'header', headers: { Accept: 'text/event-stream' } })
        expect(res.status).toBe(405)
        expect(res.headers.get('allow')).toBe('POST')
        expect(await body(res)).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null })
      }
    }
  })

  it('answers PUT with 405 too', async () => {
    const res = await call('/mcp', { method: 'PUT', json: {} })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('POST')
  })
})

describe('POST /mcp authentication', () => {
  it('takes the key in X-API-Key or in Authorization: Bearer', async () => {
    const t = await newTenant()
    expect((await rpc(t.key, 'ping', {}, { keyPlace: 'header' })).status).toBe(200)
    expect((await rpc(t.key, 'ping', {}, { keyPlace: 'bearer' })).status).toBe(200)
  })

  it('answers 401 with WWW-Authenticate when no key is sent', async () => {
    const res = await mcpPost({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="gateway"')
    expect(await body(res)).toMatchObject({ error: { message: expect.stringContaining('X-API-Key'), data: { error_code: 'unauthorized' } } })
  })

  it('answers 401 with error="invalid_token" for an unknown or revoked key', async () => {
    const t = await newTenant()
    expect((await admin(`/admin/keys/${t.keyId}`, { method: 'DELETE' })).status).toBe(200)
    for (const key of [t.key, 'svc_live_nope']) {
      const res = await mcpPost({ jsonrpc: '2.0', id: 1, method: 'ping' }, { key })
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"')
    }
  })

  it('refuses a key in the URL with 400, even next to a valid header', async () => {
    const t = await newTenant()
    for (const query of [`apiKey=${t.key}`, `api_key=${t.key}`, `token=${t.key}`, 'apiKey=']) {
      for (const withHeader of [true, false]) {
        const res = await mcpPost({ jsonrpc: '2.0', id: 1, method: 'ping' }, { key: withHeader ? t.key : undefined, path: `/mcp?${query}` })
        expect(res.status, query).toBe(400)
        const json = await body<{ error: { message: string; data: { error_code: string } } }>(res)
        expect(json.error.data.error_code).toBe('key_in_url')
        expect(json.error.message).toContain('X-API-Key')
      }
    }
  })

  it('answers 403 when the API is switched off for the tenant', async () => {
    const t = await newTenant()
    expect((await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { api_enabled: false } })).status).toBe(200)
    const answer = await rpc(t.key, 'ping')
    expect(answer.status).toBe(403)
    expect(answer.error?.message).toContain('not enabled')
  })
})

describe('Origin check', () => {
  // test/worker/vitest.config.ts sets MCP_ALLOWED_ORIGINS=https://inspector.example.
  it('serves requests without an Origin header (non-browser clients)', async () => {
    const t = await newTenant()
    expect((await rpc(t.key, 'ping')).status).toBe(200)
  })

  it('refuses a browser origin that is not configured with 403, before looking at the key', async () => {
    const t = await newTenant()
    for (const key of [t.key, undefined]) {
      const res = await mcpPost({ jsonrpc: '2.0', id: 1, method: 'ping' }, { key, headers: { Origin: 'https://evil.example' } })
      expect(res.status).toBe(403)
      expect(res.headers.get('access-control-allow-origin')).toBeNull()
      expect(await body(res)).toMatchObject({ error: { data: { error_code: 'origin_not_allowed' } } })
    }
  })

  it('refuses a rebinding page whose Origin matches the Host it used', async () => {
    const t = await newTenant()
    const res = await mcpPost({ jsonrpc: '2.0', id: 1, method: 'ping' }, { key: t.key, headers: { Origin: 'https://gateway.test' } })
    expect(res.status).toBe(403)
  })

  it('serves a configured origin with CORS headers, and answers its preflight', async () => {
    const t = await newTenant()
    const origin = 'https://inspector.example'
    const preflight = await call('/mcp', {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type, x-api-key' },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe(origin)
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-api-key')
    const res = await mcpPost({ jsonrpc: '2.0', id: 1, method: 'ping' }, { key: t.key, headers: { Origin: origin } })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe(origin)
  })
})
