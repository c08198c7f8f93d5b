/**
 * /mcp on a loopback address (npm start, a local MCP client in a browser; issue 14 §5): loopback Origins are served,
 * any other Origin is still refused, and a server reached on its public name keeps to the configured origins.
 */
import { exports } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { newTenant } from '../helpers'

function ping(base: string, origin: string, key: string) {
  return exports.default.fetch(
    new Request(`${base}/mcp`, {
      method: 'POST',
      headers: {
        Origin: origin,
        'X-API-Key': key,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    })
  )
}

describe('Origin check on a loopback server', () => {
  it('serves a localhost browser origin when the server itself is reached on loopback', async () => {
    const t = await newTenant()
    for (const [base, origin] of [
      ['http://127.0.0.1:8787', 'http://localhost:6274'],
      ['http://localhost:8787', 'http://127.0.0.1:3000'],
      ['http://[::1]:8787', 'http://[::1]:6274'],
    ] as const) {
      const res = await ping(base, origin, t.key)
      expect(res.status).toBe(200)
      expect(res.headers.get('access-control-allow-origin')).toBe(origin)
    }
  })

  it('still refuses a non-loopback origin on a loopback server (a rebinding page keeps its own origin)', async () => {
    const t = await newTenant()
    expect((await ping('http://127.0.0.1:8787', 'http://evil.example', t.key)).status).toBe(403)
    expect((await ping('http://localhost:8787', 'http://localhost.evil.example', t.key)).status).toBe(403)
  })

  it('refuses a localhost origin when the server is reached on its public name (production)', async () => {
    const t = await newTenant()
    expect((await ping('https://gateway.test', 'http://localhost:6274', t.key)).status).toBe(403)
  })
})
