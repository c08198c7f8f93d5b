/**
 * Stores one inbound item in the gateway's media store (PUT /relay/media/{sid}/{upstreamId}, docs/ARCHITECTURE.md
 * "Media ingest"). The decrypted stream is spooled to a temporary file first, so memory stays flat whatever the item
 * weighs, the exact length is known for the edge's streaming write, and a retry re-sends the file without
 * downloading again. An item over the edge's cap is reported with an empty body and its size; the edge keeps the
 * message marked too large. Transient failures (network, 5xx) are retried with backoff; the media id is derived from
 * the message at the edge, so a retried or repeated upload writes the same item.
 */
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { z } from 'zod'
import type { InboundAttachment } from '../connector'
import { reconnectDelayMs } from './backoff'

export const UPLOAD_ATTEMPTS = 6
export const UPLOAD_TIMEOUT_MS = 120_000

const UploadAnswer = z.object({
  media_id: z.string(),
  url: z.string(),
  status: z.enum(['stored', 'too_large']),
  reason: z.string().nullable(),
  size: z.number().int(),
})
export type UploadAnswer = z.infer<typeof UploadAnswer>

/** The frame's media for a stored (or refused) item. */
export type StoredFrameMedia = {
  url: string
  contentType: string
  stored: { kind: InboundAttachment['kind']; size: number; fileName: string | null; tooLarge: string | null }
}

/** The edge no longer lets this relay write for the session (another holds the lease): stop, do not retry. */
export class UploadRefusedError extends Error {
  constructor(
    message: string,
    readonly status: number
  ) {
    super(message)
    this.name = 'UploadRefusedError'
  }
}

class TooLarge extends Error {
  constructor(readonly seen: number) {
    super('over the cap')
  }
}

export type MediaUploaderOptions = {
  /** The gateway's base URL (GATEWAY_URL, http(s) or ws(s), with any path prefix). */
  gatewayUrl: string
  token: string
  /** RELAY_MEDIA_MAX_BYTES: the relay stops downloading past it and reports the item over the cap. */
  maxBytes: number
  /** Tests: shorter waits between attempts. */
  retryDelayMs?: (attempt: number) => number
}

export type MediaUploader = (sid: string, fence: number, upstreamId: string, a: InboundAttachment) => Promise<StoredFrameMedia>

function put(url: URL, headers: Record<string, string>, body: NodeJS.ReadableStream | null): Promise<{ status: number; text: string }> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const req = send(url, { method: 'PUT', headers, signal: AbortSignal.timeout(UPLOAD_TIMEOUT_MS) }, (res: IncomingMessage) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('error', reject)
    if (body) {
      body.on('error', (err) => req.destroy(err))
      body.pipe(req)
    } else req.end()
  })
}

/** Copies the stream to `file`, counting; stops as soon as it passes `max` (the rest is never downloaded). */
async function spool(a: InboundAttachment, file: string, max: number): Promise<number> {
  let seen = 0
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length
      if (seen > max) return done(new TooLarge(seen))
      done(null, chunk)
    },
  })
  await pipeline(await a.open(), counter, createWriteStream(file))
  return (await stat(file)).size
}

export function makeMediaUploader(opts: MediaUploaderOptions): MediaUploader {
  const delay = opts.retryDelayMs ?? ((n) => reconnectDelayMs(n))

  async function attemptUpload(url: URL, base: Record<string, string>, file: string | null, size: number): Promise<UploadAnswer> {
    const headers: Record<string, string> = { ...base, 'x-media-size': String(size), 'content-length': String(file ? size : 0) }
    // Without a file the item is over the relay's cap: the edge keeps the message marked too large whatever its own cap.
    if (!file) headers['x-media-over-cap'] = String(opts.maxBytes)
    const res = await put(url, headers, file ? createReadStream(file) : null)
    if (res.status === 200) return UploadAnswer.parse(JSON.parse(res.text))
    if (res.status === 401 || res.status === 409) throw new UploadRefusedError(`the gateway refused the upload (HTTP ${res.status})`, res.status)
    if (res.status >= 400 && res.status < 500)
      throw new UploadRefusedError(`the gateway refused the upload (HTTP ${res.status}: ${res.text.slice(0, 200)})`, res.status)
    throw new Error(`the gateway answered HTTP ${res.status} to the upload`)
  }

  return async (sid, fence, upstreamId, a) => {
    const url = new URL(
      `${opts.gatewayUrl.replace(/^ws/, 'http').replace(/\/+$/, '')}/relay/media/${encodeURIComponent(sid)}/${encodeURIComponent(upstreamId)}`
    )
    const base: Record<string, string> = {
      authorization: `Bearer ${opts.token}`,
      'content-type': a.contentType,
      'x-media-fence': String(fence),
      'x-media-kind': a.kind,
    }
    if (a.fileName) base['x-media-file-name'] = encodeURIComponent(a.fileName)
    const dir = await mkdtemp(join(tmpdir(), 'relay-media-'))
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          const max = opts.maxBytes
          let file: string | null = null
          let size: number
          if (a.declaredSize !== null && a.declaredSize > max) size = a.declaredSize
          else {
            try {
              file = join(dir, 'item')
              size = await spool(a, file, max)
            } catch (err) {
              if (!(err instanceof TooLarge)) throw err
              file = null
              size = a.declaredSize ?? err.seen
            }
          }
          const answer = await attemptUpload(url, base, file, size)
          return {
            url: answer.url,
            contentType: a.contentType,
            stored: {
              kind: a.kind,
              size: answer.size,
              fileName: a.fileName,
              tooLarge: answer.status === 'too_large' ? (answer.reason ?? 'over the size cap') : null,
            },
          }
        } catch (err) {
          if (err instanceof UploadRefusedError || attempt >= UPLOAD_ATTEMPTS) throw err
          await new Promise((r) => setTimeout(r, delay(attempt)))
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }
}
