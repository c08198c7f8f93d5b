/**
 * The relay's media upload against a small local server that checks each PUT as the edge does (token, fence, kind,
 * declared size equal to the body's length): an item is streamed whole from its spooled copy, an item over the
 * relay's cap is reported without its bytes, a 503 is retried, a 409 (lease gone) is not.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import type { InboundAttachment } from '../../../relay/connector'
import { makeMediaUploader, UploadRefusedError } from '../../../relay/link/media-upload'

type Seen = { url: string; headers: IncomingMessage['headers']; body: Buffer }

let server: Server | null = null
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()))
  server = null
})

async function fakeEdge(answer: (seen: Seen, n: number) => { status: number; json?: unknown }): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = []
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const s = { url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) }
    seen.push(s)
    if (req.method !== 'PUT' || req.headers.authorization !== 'Bearer rly_test' || Number(req.headers['content-length']) !== s.body.length) {
      res.writeHead(400).end('{}')
      return
    }
    const a = answer(s, seen.length)
    res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.json ?? {}))
  })
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r))
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen }
}

function item(bytes: Buffer, declared: number | null = bytes.length): InboundAttachment {
  return {
    kind: 'image',
    contentType: 'image/jpeg',
    fileName: 'a b.jpg',
    declaredSize: declared,
    open: async () => Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]),
  }
}

const stored = (s: Seen) => ({
  status: 200,
  json: { media_id: 'med_x', url: 'http://edge/media/med_x', status: 'stored', reason: null, size: Number(s.headers['x-media-size']) },
})

describe('media upload', () => {
  it('sends the whole item once, with its fence, kind, name and exact length', async () => {
    const edge = await fakeEdge((s) => stored(s))
    const upload = makeMediaUploader({ gatewayUrl: edge.url, token: 'rly_test', maxBytes: 1 << 20 })
    const bytes = Buffer.alloc(5000, 9)
    const media = await upload('sid-1', 3, 'UP1', item(bytes))
    expect(media).toEqual({
      url: 'http://edge/media/med_x',
      contentType: 'image/jpeg',
      stored: { kind: 'image', size: 5000, fileName: 'a b.jpg', tooLarge: null },
    })
    expect(edge.seen).toHaveLength(1)
    expect(edge.seen[0]).toMatchObject({
      url: '/relay/media/sid-1/UP1',
      headers: { 'x-media-fence': '3', 'x-media-kind': 'image', 'x-media-file-name': 'a%20b.jpg', 'x-media-size': '5000' },
    })
    expect(edge.seen[0]!.body.equals(bytes)).toBe(true)
  })

  it('reports an item over its cap without downloading it or sending its bytes', async () => {
    const edge = await fakeEdge((s) => ({
      status: 200,
      json: { media_id: 'med_x', url: 'http://edge/media/med_x', status: 'too_large', reason: 'over the cap', size: Number(s.headers['x-media-size']) },
    }))
    const upload = makeMediaUploader({ gatewayUrl: edge.url, token: 'rly_test', maxBytes: 1000 })
    let opened = false
    const media = await upload('sid-1', 1, 'UP2', {
      ...item(Buffer.alloc(10)),
      declaredSize: 5000,
      open: async () => {
        opened = true
        return Readable.from([])
      },
    })
    expect(opened).toBe(false)
    expect(edge.seen[0]!.body.length).toBe(0)
    expect(edge.seen[0]!.headers).toMatchObject({ 'x-media-size': '5000', 'x-media-over-cap': '1000' })
    expect(media.stored).toMatchObject({ size: 5000, tooLarge: 'over the cap' })
    // Undeclared size: the download stops past the cap.
    const streamed = await upload('sid-1', 1, 'UP3', item(Buffer.alloc(3000), null))
    expect(streamed.stored.tooLarge).toBe('over the cap')
    expect(edge.seen[1]!.body.length).toBe(0)
  })

  it('retries a 503 and gives up at once on a 409 (another relay holds the session)', async () => {
    const flaky = await fakeEdge((s, n) => (n === 1 ? { status: 503 } : stored(s)))
    const upload = makeMediaUploader({ gatewayUrl: flaky.url, token: 'rly_test', maxBytes: 1 << 20, retryDelayMs: () => 5 })
    await expect(upload('sid-1', 1, 'UP4', item(Buffer.alloc(2000, 1)))).resolves.toMatchObject({ stored: { size: 2000 } })
    expect(flaky.seen).toHaveLength(2)
    await new Promise<void>((r) => server!.close(() => r()))
    const gone = await fakeEdge(() => ({ status: 409 }))
    const refused = makeMediaUploader({ gatewayUrl: gone.url, token: 'rly_test', maxBytes: 1 << 20, retryDelayMs: () => 5 })
    await expect(refused('sid-1', 1, 'UP5', item(Buffer.alloc(10)))).rejects.toBeInstanceOf(UploadRefusedError)
    expect(gone.seen).toHaveLength(1)
  })
})
