// Fetching the one attachment of an outbound alpha message: https only, redirects re-checked, size and time bounded.
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { guardedLookup, makeMediaFetcher, MEDIA_MAX_REDIRECTS } from '../../../relay/alpha/media-fetch'
import { SendError } from '../../../relay/alpha/send-error'

let server: Server
let base: string

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    switch (url.pathname) {
      case '/photo.jpg':
        res.writeHead(200, { 'content-type': 'image/jpeg' })
        return res.end(Buffer.alloc(1000, 1))
      case '/files/report.pdf':
        res.writeHead(200)
        return res.end('%PDF-1.7')
      case '/hop':
        res.writeHead(302, { location: `/hop?n=${Number(url.searchParams.get('n') ?? 0) + 1}` })
        return res.end()
      case '/to-photo':
        res.writeHead(301, { location: '/photo.jpg' })
        return res.end()
      case '/to-file':
        res.writeHead(302, { location: 'file:///etc/passwd' })
        return res.end()
      case '/to-metadata':
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' })
        return res.end()
      case '/big-declared':
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': '5000' })
        return res.end(Buffer.alloc(5000))
      case '/big-chunked':
        res.writeHead(200, { 'content-type': 'video/mp4' })
        res.write(Buffer.alloc(3000))
        return res.end(Buffer.alloc(3000))
      case '/slow':
        res.writeHead(200, { 'content-type': 'image/png' })
        res.write(Buffer.alloc(10))
        return void setTimeout(() => res.end(), 2_000)
      default:
        res.writeHead(404)
        return res.end()
    }
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
})

/** A fetcher allowed to reach the local test server (plain http, loopback), otherwise the production rules. */
const local = (opts: { maxBytes?: number; timeoutMs?: number } = {}) => makeMediaFetcher({ ...opts, request: httpRequest, allowLoopback: true })

async function refusal(p: Promise<unknown>): Promise<SendError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e
  )
  if (!(err instanceof SendError)) throw new Error(`expected a SendError, got ${String(err)}`)
  return err
}

describe('outbound media fetch', () => {
  it('refuses every URL that is not a public https URL before connecting anywhere', async () => {
    const fetchMedia = makeMediaFetcher()
    for (const url of [
      'http://example.com/a.jpg',
      'file:///etc/passwd',
      '/etc/passwd',
      'data:image/png;base64,AAAA',
      'https://127.0.0.1/a.jpg',
      'https://[::1]/a',
      'https://localhost/a.jpg',
      'https://metadata.google.internal/x',
      'https://169.254.169.254/x',
    ]) {
      const err = await refusal(fetchMedia(url))
      expect(err.code, url).toBe('media_url_refused')
    }
  })

  it('refuses a host name that resolves to a non-public address', async () => {
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => guardedLookup(false)('localhost', {}, (e) => resolve(e)))
    expect(err?.code).toBe('EADDRNOTPUBLIC')
    const ok = await new Promise<NodeJS.ErrnoException | null>((resolve) => guardedLookup(true)('localhost', {}, (e) => resolve(e)))
    expect(ok).toBeNull()
  })

  it('returns the bytes with the content type and the file name from the URL', async () => {
    const media = await local()(`${base}/photo.jpg`)
    expect(media.bytes).toEqual(Buffer.alloc(1000, 1))
    expect(media).toMatchObject({ contentType: 'image/jpeg', fileName: 'photo.jpg' })
  })

  it('guesses the content type from the extension when the server sends none', async () => {
    const media = await local()(`${base}/files/report.pdf`)
    expect(media).toMatchObject({ contentType: 'application/pdf', fileName: 'report.pdf' })
  })

  it('follows a redirect to an allowed URL', async () => {
    const media = await local()(`${base}/to-photo`)
    expect(media.contentType).toBe('image/jpeg')
  })

  it('re-checks every redirect target and refuses file: and internal addresses', async () => {
    expect((await refusal(local()(`${base}/to-file`))).code).toBe('media_url_refused')
    expect((await refusal(local()(`${base}/to-metadata`))).code).toBe('media_url_refused')
  })

  it(`gives up after ${MEDIA_MAX_REDIRECTS} redirects`, async () => {
    const err = await refusal(local()(`${base}/hop`))
    expect(err).toMatchObject({ code: 'media_fetch_failed', message: expect.stringContaining('redirected') })
  })

  it('fails on an HTTP error status', async () => {
    const err = await refusal(local()(`${base}/missing.png`))
    expect(err).toMatchObject({ code: 'media_fetch_failed', message: 'the media URL answered HTTP 404', retryable: true })
  })

  it('refuses media over the size limit, declared or streamed', async () => {
    expect((await refusal(local({ maxBytes: 4000 })(`${base}/big-declared`))).code).toBe('media_too_large')
    expect((await refusal(local({ maxBytes: 4000 })(`${base}/big-chunked`))).code).toBe('media_too_large')
    expect((await local({ maxBytes: 6000 })(`${base}/big-chunked`)).bytes.length).toBe(6000)
  })

  it('gives up on a server that is too slow', async () => {
    const err = await refusal(local({ timeoutMs: 200 })(`${base}/slow`))
    expect(err).toMatchObject({ code: 'media_fetch_failed', message: 'fetching the media timed out' })
  })
})
