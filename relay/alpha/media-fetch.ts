/**
 * Fetches the one attachment of an outbound alpha message, so Baileys only ever sees a Buffer (a string `{url}` that
 * is not http(s) would be opened as a local file). Public https only, checked on the URL, on every redirect hop and
 * on every address the host resolves to (the relay runs next to cloud metadata endpoints; address-ranges.ts says
 * which are global); bounded in size and time.
 */
import { lookup as dnsLookup } from 'node:dns'
import type { IncomingMessage, RequestOptions } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { LookupFunction } from 'node:net'
import { parse as parseDisposition } from 'content-disposition'
import { contentTypeFromUrl, fileNameFromUrl } from '../../common/media'
import { checkPublicUrl } from '../../common/public-url'
import { isFetchableAddress } from '../../common/address-ranges'
import type { FetchedMedia } from './convert'
import { SendError } from './send-error'

/** alpha's limit for photos, videos and audio; documents could be larger, but the relay holds the file in memory. */
export const MEDIA_MAX_BYTES = 16 * 1024 * 1024
/** For the whole fetch: connect, redirects and body. */
export const MEDIA_FETCH_TIMEOUT_MS = 20_000
export const MEDIA_MAX_REDIRECTS = 3

type Request = (
  url: URL,
  options: RequestOptions,
  onResponse: (res: IncomingMessage) => void
) => { on(e: 'error', f: (err: Error) => void): unknown; end(): void }

export type MediaFetchOptions = {
  maxBytes?: number
  timeoutMs?: number
  /** Tests only: a plain-http transport and loopback admitted, so a local server can stand in for a media host. */
  request?: Request
  allowLoopback?: boolean
}

export type FetchMedia = (url: string) => Promise<FetchedMedia>

/** A DNS lookup that refuses hosts resolving to any non-public address, so the check and the connection agree. */
export function guardedLookup(allowLoopback: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0)
      const refused = addresses.find((a) => !isFetchableAddress(a.address, { allowLoopback }))
      if (refused || addresses.length === 0) {
        const e: NodeJS.ErrnoException = new Error(`${hostname} does not resolve to a public address`)
        e.code = 'EADDRNOTPUBLIC'
        return callback(e, '', 0)
      }
      if (options.all) return callback(null, addresses)
      const first = addresses[0]!
      callback(null, first.address, first.family)
    })
  }
}

function checked(raw: string, allowLoopback: boolean): URL {
  const check = checkPublicUrl(raw, { allowLoopback, ownHosts: [] })
  if (!check.ok) throw new SendError('media_url_refused', `media URL refused: ${check.reason}`)
  // checkPublicUrl admits http only for loopback in test mode; production is https and nothing else.
  if (check.url.protocol !== 'https:' && !allowLoopback) throw new SendError('media_url_refused', 'media URL refused: only https')
  return check.url
}

export function makeMediaFetcher(opts: MediaFetchOptions = {}): FetchMedia {
  const maxBytes = opts.maxBytes ?? MEDIA_MAX_BYTES
  const timeoutMs = opts.timeoutMs ?? MEDIA_FETCH_TIMEOUT_MS
  const allowLoopback = opts.allowLoopback ?? false
  const request: Request = opts.request ?? httpsRequest
  const lookup = guardedLookup(allowLoopback)

  return async (raw) => {
    const signal = AbortSignal.timeout(timeoutMs)
    let url = checked(raw, allowLoopback)
    for (let hop = 0; ; hop++) {
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = request(url, { method: 'GET', lookup, signal, headers: { accept: '*/*', 'user-agent': 'messaging-gateway-relay' } }, resolve)
        req.on('error', (err) => reject(fetchError(err, signal)))
        req.end()
      })
      const status = res.statusCode ?? 0
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume()
        if (hop >= MEDIA_MAX_REDIRECTS) throw new SendError('media_fetch_failed', `the media URL redirected more than ${MEDIA_MAX_REDIRECTS} times`)
        url = checked(new URL(res.headers.location, url).toString(), allowLoopback)
        continue
      }
      if (status < 200 || status >= 300) {
        res.resume()
        throw new SendError('media_fetch_failed', `the media URL answered HTTP ${status}`)
      }
      const declared = Number(res.headers['content-length'])
      if (Number.isFinite(declared) && declared > maxBytes) {
        res.destroy()
        throw tooLarge(maxBytes)
      }
      const bytes = await readCapped(res, maxBytes, signal)
      const header = res.headers['content-type']?.trim() || null
      // The server's name for the file beats the URL's last segment (a download link is often `/dl?id=3`).
      const fileName = fileNameFromDisposition(res.headers['content-disposition']) ?? fileNameFromUrl(url.toString())
      return { bytes, contentType: header ?? contentTypeFromUrl(url.toString()), fileName }
    }
  }
}

/** The file name a Content-Disposition header gives (RFC 6266, filename* decoded), without any path; null if none. */
export function fileNameFromDisposition(header: string | undefined): string | null {
  if (!header) return null
  try {
    const name = parseDisposition(header).parameters.filename?.split(/[\\/]/).pop()?.trim()
    return name ? name.slice(0, 255) : null
  } catch {
    return null
  }
}

function tooLarge(maxBytes: number): SendError {
  return new SendError('media_too_large', `the media is larger than ${Math.floor(maxBytes / (1024 * 1024))} MiB`)
}

function fetchError(err: unknown, signal: AbortSignal): SendError {
  if (err instanceof SendError) return err
  if (signal.aborted) return new SendError('media_fetch_failed', 'fetching the media timed out')
  const code = err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : null
  if (code === 'EADDRNOTPUBLIC' && err instanceof Error) return new SendError('media_url_refused', `media URL refused: ${err.message}`)
  return new SendError('media_fetch_failed', `fetching the media failed${code ? ` (${code})` : ''}`)
}

function readCapped(res: IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    res.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) {
        // Settle first: destroying the stream emits its own error, which must not win.
        reject(tooLarge(maxBytes))
        res.destroy()
        return
      }
      chunks.push(chunk)
    })
    res.on('end', () => resolve(Buffer.concat(chunks)))
    res.on('error', (err) => reject(fetchError(err, signal)))
    res.on('aborted', () => reject(fetchError(new Error('aborted'), signal)))
  })
}
