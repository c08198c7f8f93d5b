/**
 * The message archive: what retention deletes from D1 is first written to R2 (the media bucket) as gzip-compressed
 * NDJSON, one line per message in its wire form (exactly the JSON `GET /v1/messages/{id}` answered for it, media
 * links unsigned), per account and UTC day of the message. Layout (docs/api.md, "Retention and archive"):
 *
 *   archive/{tenantId}/{accountId}/{YYYY-MM-DD}/{firstSeq, 16 digits}.ndjson.gz
 *
 * A day is written in parts, one per sweep step that held messages of it, named by the first seq in it, so
 * listing a day's prefix gives its parts in message order, and a step that is repeated (its delete failed after the
 * write) starts at the same seq and overwrites its own part instead of adding a second copy.
 */
import { utcDay } from '../lib/time'
import type { MessageWithContact } from './messages'
import { toWireMessage } from './wire'

const SEQ_DIGITS = 16

export function archiveDayPrefix(tenantId: string, accountId: string, day: string): string {
  return `archive/${encodeURIComponent(tenantId)}/${encodeURIComponent(accountId)}/${day}/`
}

export function archivePartKey(tenantId: string, accountId: string, day: string, firstSeq: number): string {
  return `${archiveDayPrefix(tenantId, accountId, day)}${String(firstSeq).padStart(SEQ_DIGITS, '0')}.ndjson.gz`
}

/** The NDJSON line of one message: its wire form, as the API answers it. */
export function archiveLine(row: MessageWithContact): string {
  return `${JSON.stringify(toWireMessage(row))}\n`
}

async function gzip(text: string): Promise<ArrayBuffer> {
  return new Response(new Blob([text]).stream().pipeThrough(new CompressionStream('gzip'))).arrayBuffer()
}

/**
 * Writes the given messages (one tenant's, in seq order) as one part per account and day; answers how many parts.
 * Resolves only once every part is stored, so the caller deletes rows the archive holds.
 */
export async function writeArchive(bucket: R2Bucket, tenantId: string, rows: readonly MessageWithContact[]): Promise<number> {
  const parts = new Map<string, { accountId: string; day: string; firstSeq: number; lines: string[] }>()
  for (const row of rows) {
    const day = utcDay(row.message.createdAt)
    const id = `${row.message.accountId}\u0000${day}`
    const part = parts.get(id) ?? { accountId: row.message.accountId, day, firstSeq: row.message.seq, lines: [] }
    part.lines.push(archiveLine(row))
    parts.set(id, part)
  }
  await Promise.all(
    [...parts.values()].map(async (p) =>
      bucket.put(archivePartKey(tenantId, p.accountId, p.day, p.firstSeq), await gzip(p.lines.join('')), {
        httpMetadata: { contentType: 'application/x-ndjson', contentEncoding: 'gzip' },
        customMetadata: { messages: String(p.lines.length) },
      })
    )
  )
  return parts.size
}

/** The keys of one account's archived day, in message order (empty when nothing of that day was archived). */
export async function archiveParts(bucket: R2Bucket, tenantId: string, accountId: string, day: string): Promise<string[]> {
  const keys: string[] = []
  let cursor: string | undefined
  do {
    const page = await bucket.list({ prefix: archiveDayPrefix(tenantId, accountId, day), cursor })
    keys.push(...page.objects.map((o) => o.key))
    cursor = page.truncated ? page.cursor : undefined
  } while (cursor)
  return keys.sort()
}

/**
 * The NDJSON of those parts, decompressed and joined, as a stream: a day of a busy account may hold more than a
 * Worker should buffer. A part deleted meanwhile is skipped.
 */
export function archiveStream(bucket: R2Bucket, keys: readonly string[]): ReadableStream<Uint8Array> {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>()
  const pump = async () => {
    for (const key of keys) {
      const part = await bucket.get(key)
      if (!part) continue
      await part.body.pipeThrough(new DecompressionStream('gzip')).pipeTo(writable, { preventClose: true })
    }
    await writable.close()
  }
  pump().catch((err: unknown) => writable.abort(err).catch(() => undefined))
  return readable
}
