/**
 * An inbound MMS from the phone (`mms:downloaded`, upstreams.md 4.4): the files arrive base64-encoded in the webhook
 * body, so each is decoded and put into the media store here (media/ingest-inline.ts) and the message goes the way a
 * Twilio MMS goes (inbound.ts, account/inbound-queue.ts), its attachments marked as stored: one message per file, the
 * text on the first.
 */
import { z } from 'zod'
import { partUpstreamId, type Attachment } from '../../account/inbound-queue.shared'
import { mediaConfig } from '../../config'
import type { Db } from '../../db/client'
import { ingestMediaBytes } from '../../media/ingest-inline'
import { GATEWAY_WEBHOOK_MAX_BYTES } from '../../lib/abuse-limits'

/** The largest webhook body the phone's route reads (lib/abuse-limits.ts). */
export { GATEWAY_WEBHOOK_MAX_BYTES }

/** spec 2 gives a message one `media`, and the queue takes 10 per message (Twilio's own limit). */
const MAX_ATTACHMENTS = 10

export const MmsDownloaded = z.object({
  messageId: z.string().nullish(),
  sender: z.string().nullish(),
  phoneNumber: z.string().nullish(),
  body: z.string().nullish(),
  subject: z.string().nullish(),
  attachments: z
    .array(
      z.object({
        partId: z.union([z.number(), z.string()]).nullish(),
        contentType: z.string().max(200).nullish(),
        name: z.string().nullish(),
        size: z.number().nullish(),
        data: z.string().nullish(),
      })
    )
    .default([]),
})
export type MmsDownloaded = z.infer<typeof MmsDownloaded>

/** The MMS's text: the aggregated body, or the subject when there is no body. */
export function mmsText(p: MmsDownloaded): string {
  return p.body?.trim() ? p.body : (p.subject ?? '')
}

/** Layout parts (SMIL) and text parts (already in `body`) are not files the sender attached. */
function isFile(contentType: string | null | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase()
  return type !== 'application/smil' && type !== 'text/plain'
}

function decodeBase64(data: string): Uint8Array | null {
  try {
    return Uint8Array.from(atob(data.replace(/\s+/g, '')), (ch) => ch.charCodeAt(0))
  } catch {
    return null
  }
}

/**
 * Stores each file of the MMS under the id of the message that will carry it (`{upstreamId}`, `{upstreamId}/1`, …)
 * and answers the attachments to queue. A file without bytes (`data` null, or not base64) is queued without a row and
 * stored as unavailable.
 */
export async function storeMmsFiles(
  env: Env,
  db: Db,
  scope: { tenantId: string; accountId: string },
  upstreamId: string,
  p: MmsDownloaded,
  now: number
): Promise<Attachment[]> {
  const files = p.attachments.filter((a) => isFile(a.contentType)).slice(0, MAX_ATTACHMENTS)
  const deps = { bucket: env.MEDIA, db, maxBytes: mediaConfig(env).maxBytes, now }
  const out: Attachment[] = []
  for (const [i, a] of files.entries()) {
    const fileName = a.name ? a.name.slice(0, 512) : null
    const contentType = a.contentType ?? null
    const bytes = a.data ? decodeBase64(a.data) : null
    if (bytes) await ingestMediaBytes(deps, scope, partUpstreamId(upstreamId, i), { bytes, contentType, fileName, kind: null })
    out.push({ url: `gateway-mms:${upstreamId}/${a.partId ?? i}`, contentType, fileName, kind: null, stored: true })
  }
  return out
}
