/**
 * Deadlines around GramJS, which has none (a call on a dead sender, a connect to a silent server, a download whose
 * parts stop coming all wait forever): the errors the driver reads as transient, a promise deadline, and a download
 * stream that fails when it stalls instead of ending short or hanging.
 */
import { PassThrough } from 'node:stream'

/** A download that delivers no byte for this long (the reader keeping up) has stalled. */
export const DOWNLOAD_STALL_MS = 30_000

export class BetaTimeoutError extends Error {
  override name = 'BetaTimeoutError'
}
export class BetaLinkDownError extends Error {
  override name = 'BetaLinkDownError'
}

export function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new BetaTimeoutError(`beta: ${what} timed out after ${ms} ms`)), ms)
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e: unknown) => (clearTimeout(t), reject(e))
    )
  })
}

/**
 * GramJS writes a download into any `{write, close}` object, awaiting each write: a PassThrough fed that way keeps
 * its pace to the reader's. GramJS calls `close` on failure too, so the stream ends only when the download resolved.
 * `stallMs`: no byte for that long (the reader keeping up) fails the stream.
 */
export function streamDownload(
  download: (writer: { write(chunk: Buffer): Promise<void>; close(): void }) => Promise<unknown>,
  stallMs = DOWNLOAD_STALL_MS
): NodeJS.ReadableStream {
  const out = new PassThrough()
  let stall: NodeJS.Timeout | null = null
  const watch = () => {
    if (stall) clearTimeout(stall)
    stall = setTimeout(() => out.destroy(new BetaTimeoutError(`beta: the download stalled for ${stallMs} ms`)), stallMs)
  }
  const writer = {
    write: (chunk: Buffer) =>
      new Promise<void>((resolve, reject) => {
        if (out.destroyed) return reject(new Error('the reader went away'))
        const done = () => (watch(), resolve())
        if (out.write(chunk)) return done()
        out.once('drain', done)
      }),
    close: () => undefined,
  }
  watch()
  out.once('close', () => stall && clearTimeout(stall))
  download(writer).then(
    () => out.end(),
    (err: unknown) => out.destroy(err instanceof Error ? err : new Error(String(err)))
  )
  return out
}
