/**
 * Inbound messages whose attachments sit at a provider URL (SMS/MMS from Twilio, the page inbox): the webhook queues
 * the message here and is answered at once (Twilio gives up after 15 s), and the AccountDO's `media` timer fetches
 * each attachment into the media store (media/ingest-url.ts) before the message is stored, so the message that reaches
 * waits, lists and webhooks already carries a working `media.url`.
 *
 * Rules (docs/media.md, "SMS and the page inbox"):
 * - Order: the account's messages are stored in arrival order. While anything is queued, a text-only message queues
 *   behind it; with an empty queue it is stored at once.
 * - One message per attachment: an MMS with three pictures becomes three messages, the text on the first, with upstream
 *   ids `{sid}`, `{sid}/1`, `{sid}/2` (spec 2 gives a message one `media`).
 * - A fetch that may work later (network, timeout, 408/429/5xx) is retried after 5 s, 30 s and 2 min; after that, or
 *   at once for a permanent refusal, the message is stored with `media.unavailable` and the reason. Never dropped.
 * - Files a provider sends inline (the phone's MMS) are stored by its webhook before it queues the message, marked
 *   `stored`: the timer only reads their rows.
 * - Idempotent by provider message id: a re-delivered webhook is one queue row, a message already stored is not
 *   fetched again, and an attachment already in the store is not fetched twice (its id derives from the upstream id).
 */
import { mediaConfig, urlPolicy } from '../config'
import type { ContactSeed } from '../db/contacts'
import { findByUpstreamId } from '../db/messages'
import { setContactOptedOut } from '../db/sms'
import { mediaIdFor, mediaPath } from '../media/ids'
import type { StoredItem } from '../media/inbound'
import { ingestMediaUrl, kindOf, type IngestedMedia } from '../media/ingest-url'
import { getMedia, upsertMedia } from '../db/media'
import type { AccountContext } from './context'
import { ingestMessage, ingestMessages, type InboundItem, type IngestOutcome } from './ingest'
import { partUpstreamId, QueuedInbound, type Attachment } from './inbound-queue.shared'
import type { AccountRef } from './storage'

export type ProviderInboundOutcome = { queued: true; duplicate: boolean } | ({ queued: false } & IngestOutcome)

/** Delays before the 2nd, 3rd and 4th fetch of a message's media; then it is stored as unavailable. */
export const MEDIA_RETRY_DELAYS_MS = [5_000, 30_000, 120_000] as const
/** One attachment's whole transfer; an alarm may run 15 minutes. */
export const MEDIA_FETCH_TIMEOUT_MS = 5 * 60_000

async function applyOptOut(c: AccountContext, ref: AccountRef, item: QueuedInbound, outcome: IngestOutcome | undefined, now: number) {
  if (item.optOut && outcome?.stored && !outcome.duplicate) await setContactOptedOut(c.db, ref.tenantId, outcome.contactId, item.optOut === 'stop', now)
}

function textOnly(item: QueuedInbound): InboundItem {
  return {
    contact: item.contact satisfies ContactSeed,
    text: item.text,
    mediaUrl: null,
    mediaContentType: null,
    upstreamId: item.upstreamId,
    replyTo: item.replyTo ?? null,
  }
}

/**
 * A provider's inbound message: stored now when it has no attachment and nothing is queued before it, else queued
 * (the caller then runs the queue in the background; the `media` timer is the durable backstop).
 */
export async function receiveProviderInbound(c: AccountContext, ref: AccountRef, item: QueuedInbound, now: number): Promise<ProviderInboundOutcome> {
  c.store.setRef(ref)
  if (item.attachments.length === 0 && !c.store.inboundQueued()) {
    const outcome = await ingestMessage(c, { ref, ...textOnly(item) })
    await applyOptOut(c, ref, item, outcome, now)
    return { queued: false, ...outcome }
  }
  const fresh = c.store.enqueueInbound(item.upstreamId, JSON.stringify(item), now)
  if (fresh) await c.schedule('media', now)
  return { queued: true, duplicate: !fresh }
}

/** An attachment's outcome as the message keeps it, with the type `media.content_type` shows. */
type Got = { item: StoredItem; contentType: string | null }

function storedItem(r: Extract<IngestedMedia, { row: unknown }>): Got {
  const row = r.row
  return { item: { id: row.id, kind: row.kind, size: row.size, fileName: row.fileName, error: row.reason, status: r.status }, contentType: row.contentType }
}

/**
 * Stores queued messages in order until the queue is empty or its head must wait for a retry; arms the `media`
 * timer for that. `clock` is injected so the retry schedule is tested without waiting.
 */
export async function drainInboundQueue(c: AccountContext, clock: () => number): Promise<void> {
  for (;;) {
    const ref = c.store.ref()
    const head = c.store.inboundHead()
    if (!head || !ref) {
      await c.unschedule('media')
      return
    }
    const now = clock()
    if (head.nextAt > now) {
      await c.schedule('media', head.nextAt)
      return
    }
    const item = QueuedInbound.parse(JSON.parse(head.item))
    // Stored already (a run that stopped between storing and dequeuing, or a re-delivery after the queue emptied).
    if (await findByUpstreamId(c.db, ref.tenantId, ref.accountId, 'inbound', item.upstreamId)) {
      c.store.dropInbound(head.seq)
      continue
    }
    const media: Got[] = []
    let wait: number | null = null
    for (const [i, a] of item.attachments.entries()) {
      const got = await fetchAttachment(c, ref, partUpstreamId(item.upstreamId, i), a, now)
      if (got.status !== 'failed') {
        media.push(storedItem(got))
        continue
      }
      const delay = MEDIA_RETRY_DELAYS_MS[head.attempts]
      if (got.retry && delay !== undefined) {
        wait = now + delay
        break
      }
      media.push(await unavailable(c, ref, partUpstreamId(item.upstreamId, i), a, got.reason, now))
    }
    if (wait !== null) {
      c.store.deferInbound(head.seq, head.attempts + 1, wait)
      await c.schedule('media', wait)
      return
    }
    const items: InboundItem[] =
      media.length === 0
        ? [textOnly(item)]
        : media.map((m, i) => ({
            contact: item.contact,
            text: i === 0 ? item.text : '',
            mediaUrl: `${item.origin}${mediaPath(m.item.id)}`,
            mediaContentType: m.contentType,
            stored: m.item,
            upstreamId: partUpstreamId(item.upstreamId, i),
            // The reply is the first part; the rest are the same message's other files.
            replyTo: i === 0 ? (item.replyTo ?? null) : null,
          }))
    const outcomes = await ingestMessages(c, ref, items)
    await applyOptOut(c, ref, item, outcomes[0], now)
    c.store.dropInbound(head.seq)
  }
}

async function fetchAttachment(c: AccountContext, ref: AccountRef, upstreamId: string, a: Attachment, now: number): Promise<IngestedMedia> {
  if (a.stored) {
    const row = await getMedia(c.db, await mediaIdFor(ref.tenantId, ref.accountId, upstreamId))
    if (row && (row.status === 'stored' || row.status === 'too_large')) return { status: row.status, row }
    return { status: 'failed', retry: false, reason: 'the provider sent the attachment without its content' }
  }
  const headers = (await c.channels(ref.channel).mediaHeaders?.(c.env, c.db, ref, a.url)) ?? undefined
  const deps = {
    bucket: c.env.MEDIA,
    db: c.db,
    policy: urlPolicy(c.env),
    maxBytes: mediaConfig(c.env).maxBytes,
    now,
    timeoutMs: MEDIA_FETCH_TIMEOUT_MS,
  }
  return ingestMediaUrl(deps, ref, upstreamId, { ...a, headers })
}

/** A row saying why there are no bytes, so the message's link answers 404 `media_unavailable` with the reason. */
async function unavailable(c: AccountContext, ref: AccountRef, upstreamId: string, a: Attachment, reason: string, now: number): Promise<Got> {
  const id = await mediaIdFor(ref.tenantId, ref.accountId, upstreamId)
  const contentType = a.contentType && !a.contentType.includes('*') ? a.contentType : 'application/octet-stream'
  // Graph names only the family (`image/*`): enough to tell the kind.
  const kind = a.kind ?? kindOf((a.contentType ?? contentType).replace('*', 'x'), null)
  await upsertMedia(c.db, {
    id,
    tenantId: ref.tenantId,
    accountId: ref.accountId,
    kind,
    contentType,
    size: 0,
    fileName: a.fileName,
    status: 'unavailable',
    reason,
    createdAt: now,
  })
  return { item: { id, kind, size: null, fileName: a.fileName, error: reason, status: 'unavailable' }, contentType: a.contentType }
}
