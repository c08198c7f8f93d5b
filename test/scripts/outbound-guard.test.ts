// scripts/outbound-guard.mjs, the Worker's outbound fetch() under `npm start`: a name is resolved once, refused when
// any address is not public, and the connection goes to the checked address. A resolver stands in for DNS (this
// machine resolves nothing offline); a real local HTTP server is the internal service a name might point at.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkedAddresses, createOutboundGuard, REFUSED_HEADER, REFUSED_STATUS, type ResolvedAddress } from '../../scripts/outbound-guard.mjs'

const hits: string[] = []
let server: Server
let port: number

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(`${req.method} ${req.headers.host} ${req.url}`)
    res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'] })
    res.end('internal secret')
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  port = (server.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

/** A resolver with fixed answers that counts how often it was asked. */
function resolver(answers: Record<string, string[]>) {
  const asked: string[] = []
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    asked.push(hostname)
    const list = answers[hostname]
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
  return { resolve, asked }
}

describe('checkedAddresses', () => {
  const { resolve } = resolver({
    'loop.test': ['127.0.0.1'],
    'ten.test': ['10.1.2.3'],
    'six-loop.test': ['::1'],
    'ula.test': ['fd00::1'],
    'metadata.test': ['169.254.169.254'],
    'mixed.test': ['93.184.215.14', '192.168.1.10'],
    'public.test': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    localhost: ['127.0.0.1', '::1'],
  })

  it.each(['loop.test', 'ten.test', 'six-loop.test', 'ula.test', 'metadata.test', 'mixed.test'])(
    'refuses %s, which resolves to a non-public address',
    async (name) => {
      await expect(checkedAddresses(name, { resolve, allowLoopback: true })).rejects.toThrow(/which is not public/)
    }
  )

  it('accepts a name whose every address is public', async () => {
    await expect(checkedAddresses('public.test', { resolve })).resolves.toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ])
  })

  it('admits loopback literals and localhost only when loopback is allowed (local receivers)', async () => {
    await expect(checkedAddresses('127.0.0.1', { resolve, allowLoopback: true })).resolves.toEqual([{ address: '127.0.0.1', family: 4 }])
    await expect(checkedAddresses('::1', { resolve, allowLoopback: true })).resolves.toHaveLength(1)
    await expect(checkedAddresses('localhost', { resolve, allowLoopback: true })).resolves.toHaveLength(2)
    await expect(checkedAddresses('127.0.0.1', { resolve })).rejects.toThrow(/not a public address/)
    await expect(checkedAddresses('localhost', { resolve })).rejects.toThrow(/which is not public/)
    await expect(checkedAddresses('10.0.0.1', { resolve, allowLoopback: true })).rejects.toThrow(/not a public address/)
  })
})

describe('the outbound guard', () => {
  it('answers a refusal and never connects when the name resolves to the internal service', async () => {
    const { resolve } = resolver({ 'internal.test': ['127.0.0.1'] })
    const before = hits.length
    const res = await createOutboundGuard({ resolve, allowLoopback: true })(new Request(`http://internal.test:${port}/admin`, { method: 'POST', body: 'x' }))
    expect(res.status).toBe(REFUSED_STATUS)
    expect(res.headers.get(REFUSED_HEADER)).toBe('refused')
    expect(await res.text()).toContain('internal.test resolves to 127.0.0.1')
    expect(hits.length).toBe(before)
  })

  it('connects to the address it checked, resolving once (a second DNS answer cannot redirect it)', async () => {
    // The name exists only in this resolver, so reaching the server proves the socket used the checked answer. The
    // test counts 127.0.0.1 as public to stand in for a public host.
    const { resolve, asked } = resolver({ 'pinned.test': ['127.0.0.1'] })
    const guard = createOutboundGuard({ resolve, isAllowedAddress: (ip) => ip === '127.0.0.1' })
    const res = await guard(
      new Request(`http://pinned.test:${port}/hook?x=1`, { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } })
    )
    expect(res.status).toBe(200)
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2'])
    expect(await res.text()).toBe('internal secret')
    expect(hits.at(-1)).toBe(`POST pinned.test:${port} /hook?x=1`)
    expect(asked).toEqual(['pinned.test'])
  })

  it('passes a loopback literal through when loopback URLs are allowed, and refuses it otherwise', async () => {
    const before = hits.length
    expect((await createOutboundGuard({ allowLoopback: true })(new Request(`http://127.0.0.1:${port}/r`))).status).toBe(200)
    expect(hits.length).toBe(before + 1)
    expect((await createOutboundGuard({ allowLoopback: false })(new Request(`http://127.0.0.1:${port}/r`))).status).toBe(REFUSED_STATUS)
    expect(hits.length).toBe(before + 1)
  })
})
