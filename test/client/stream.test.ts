/**
 * The client's wait loop (`gw.messages.stream()`) against a small local server that answers GET /v1/messages/wait
 * from a script of answers, checking the key and the cursor each call carries.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createGateway, MessagingError } from '../../client/src/index'

type Answer = { status: number; body: unknown }
type Call = { cursor: string | null; timeout: string | null; account: string | null; auth: string | undefined }

let server: Server | null = null
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()))
  server = null
})

/** Answers the waits in order; once the script is used up, every wait hangs until its client goes away. */
async function waitServer(script: Answer[]): Promise<{ url: string; calls: Call[] }> {
  const calls: Call[] = []
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    if (url.pathname !== '/v1/messages/wait') return void res.writeHead(404).end()
    calls.push({
      cursor: url.searchParams.get('cursor'),
      timeout: url.searchParams.get('timeout_s'),
      account: url.searchParams.get('account_id'),
      auth: req.headers.authorization,
    })
    const answer = script.shift()
    if (!answer) return
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body))
  })
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r))
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, calls }
}

const msg = (id: string) => ({ id, direction: 'inbound', text: id })
const batch = (cursor: string, ...ids: string[]) => ({ status: 200, body: { messages: ids.map(msg), cursor } })

describe('gw.messages.stream()', () => {
  it('yields every message in order and passes each answer’s cursor to the next wait, with the key', async () => {
    const srv = await waitServer([batch('c1', 'a', 'b'), batch('c2'), batch('c3', 'c')])
    const gw = createGateway({ baseUrl: srv.url, apiKey: 'svc_live_k' })
    const stream = gw.messages.stream({ cursor: 'c0', accountId: '+15550001', timeoutS: 5 })
    const seen: string[] = []
    for await (const m of stream) {
      seen.push(m.id)
      if (seen.length === 3) break
    }
    expect(seen).toEqual(['a', 'b', 'c'])
    expect(srv.calls.map((c) => c.cursor)).toEqual(['c0', 'c1', 'c2'])
    expect(srv.calls[0]).toMatchObject({ timeout: '5', account: '+15550001', auth: 'Bearer svc_live_k' })
  })

  it('moves its cursor past a batch only once the whole batch was taken', async () => {
    const srv = await waitServer([batch('c1', 'a', 'b')])
    const stream = createGateway({ baseUrl: srv.url, apiKey: 'k' }).messages.stream({ cursor: 'c0' })
    for await (const m of stream) if (m.id === 'a') break
    expect(stream.cursor).toBe('c0')
  })

  it('waits out a wait_concurrency refusal and repeats the same cursor', async () => {
    const srv = await waitServer([{ status: 429, body: { error_code: 'wait_concurrency', error: 'two waits open' } }, batch('c1', 'a')])
    const stream = createGateway({ baseUrl: srv.url, apiKey: 'k' }).messages.stream({ cursor: 'c0' })
    const started = Date.now()
    for await (const m of stream) {
      expect(m.id).toBe('a')
      break
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(900)
    expect(srv.calls.map((c) => c.cursor)).toEqual(['c0', 'c0'])
  })

  it('ends by throwing a refusal that repeating cannot fix (invalid_cursor)', async () => {
    const srv = await waitServer([{ status: 400, body: { error_code: 'invalid_cursor', error: 'not a cursor' } }])
    const stream = createGateway({ baseUrl: srv.url, apiKey: 'k' }).messages.stream({ cursor: 'bogus' })
    const thrown = await (async () => {
      for await (const _ of stream) return null
    })().catch((e: unknown) => e)
    expect(thrown).toBeInstanceOf(MessagingError)
    expect(thrown).toMatchObject({ code: 'invalid_cursor' })
  })

  it('stops when its signal aborts, cancelling the open wait', async () => {
    const srv = await waitServer([])
    const abort = new AbortController()
    const stream = createGateway({ baseUrl: srv.url, apiKey: 'k' }).messages.stream({ signal: abort.signal })
    const done = (async () => {
      for await (const _ of stream) return 'message'
      return 'ended'
    })()
    await expect.poll(() => srv.calls.length).toBe(1)
    abort.abort()
    await expect(done).resolves.toBe('ended')
  })
})
