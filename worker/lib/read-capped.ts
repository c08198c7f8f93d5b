/**
 * Reading a body up to a cap, chunk by chunk: a body sent without Content-Length (chunked) is cut off as soon as it
 * passes the cap instead of being buffered whole first (issue 14 §2).
 */

/**
 * Hands each chunk of `body` to `take` while the total stays within `maxBytes`; once it passes, the stream is
 * cancelled and the answer says `over` (with `size` the bytes read so far, the last chunk included).
 */
export async function eachChunkCapped(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  take: (chunk: Uint8Array) => void | Promise<void>
): Promise<{ over: boolean; size: number }> {
  if (!body) return { over: false, size: 0 }
  const reader = body.getReader()
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return { over: false, size }
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined)
      return { over: true, size }
    }
    await take(value)
  }
}

/** The whole body, or null when it is larger than `maxBytes`. */
export async function readCapped(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Uint8Array | null> {
  const chunks: Uint8Array[] = []
  const { over, size } = await eachChunkCapped(body, maxBytes, (chunk) => {
    chunks.push(chunk)
  })
  if (over) return null
  const out = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    out.set(chunk, at)
    at += chunk.byteLength
  }
  return out
}
