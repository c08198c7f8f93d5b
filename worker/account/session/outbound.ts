/**
 * Outbound on relay channels (alpha, beta). The queued D1 row stays the outbox: a send is handed to the relay holding
 * the account's lease and stays `queued` until that relay reports it handed to the upstream (`sent`, with the
 * upstream id, and `message.sent`) or refused (`failed`); both reports go through delivery.ts like any other
 * outcome. Without a relay it waits; every reconnect hands it over again (the relay and the upstream de-duplicate
 * on the message id); 10 minutes after it was queued it fails with `relay_unavailable` (RELAY_PATIENCE).
 */
import type { OutboundMessage, QueuedSend } from '../../../schema/frames'
import { queuedMessages, quotedMessages, type MessageWithContact } from '../../db/messages'
import { relayHub } from '../../lib/objects'
import type { AccountContext, DeliveryResult } from '../context'
import type { AccountRef } from '../storage'
import { SESSION_KEY, SessionRecord } from './state'

/** A relay send not handed to the upstream this long after it was queued fails (spec: 10 minutes). */
export const RELAY_UNAVAILABLE_MS = 10 * 60_000
export const RELAY_UNAVAILABLE_ERROR = 'relay_unavailable: no relay handed this message to the network within 10 minutes'

/** How long a relay-run channel's message may wait for a relay (account/delivery.ts fails it after that). */
export const RELAY_PATIENCE = { ms: RELAY_UNAVAILABLE_MS, error: RELAY_UNAVAILABLE_ERROR }

type Quotes = Awaited<ReturnType<typeof quotedMessages>>

export function toQueuedSend(row: MessageWithContact, quotes: Quotes = new Map()): QueuedSend {
  const m = row.message
  const quoted = m.replyTo ? quotes.get(m.replyTo) : undefined
  const message: OutboundMessage = {
    messageId: m.id,
    to: { phone: row.contact?.phone ?? null, peerId: row.contact?.peerId ?? null },
    text: m.text,
    mediaUrl: m.mediaUrl,
    // A quoted reply (issue 25): the driver names the quoted message by its upstream id (the route let only one that
    // reached the network be quoted; should it have none, the message goes without the quote rather than not at all).
    ...(quoted?.upstreamId ? { replyTo: { upstreamId: quoted.upstreamId, fromMe: quoted.direction === 'outbound', text: quoted.text } } : {}),
  }
  return { message, expiresAt: m.createdAt + RELAY_UNAVAILABLE_MS }
}

/** The messages these sends quote, read together. */
function quotesOf(c: AccountContext, ref: AccountRef, rows: MessageWithContact[]): Promise<Quotes> {
  const ids = rows.flatMap((r) => (r.message.replyTo ? [r.message.replyTo] : []))
  return quotedMessages(c.db, ref.tenantId, ids)
}

/** Every send of the account still queued and not yet expired, oldest first. */
export async function queuedSends(c: AccountContext, ref: AccountRef): Promise<QueuedSend[]> {
  const now = Date.now()
  const rows = (await queuedMessages(c.db, ref.tenantId, ref.accountId, Number.MAX_SAFE_INTEGER)).filter(
    (r) => r.message.createdAt + RELAY_UNAVAILABLE_MS > now
  )
  const quotes = await quotesOf(c, ref, rows)
  return rows.map((r) => toQueuedSend(r, quotes))
}

/** A relay-run channel's transport: hands the message to the hub. The outcome comes later, as a frame from the relay. */
export async function handToRelay(c: AccountContext, row: MessageWithContact): Promise<DeliveryResult> {
  const record = c.store.get(SESSION_KEY, SessionRecord)
  if (!record) return { ok: false, code: null, error: 'the account has no linked session' }
  const ref = c.store.ref()
  const send = toQueuedSend(row, ref ? await quotesOf(c, ref, [row]) : new Map())
  // A reply from this person must land on the same contact, however the upstream addresses them.
  if (row.contact?.phone) c.store.rememberPeerContact([`phone:${row.contact.phone}`], row.message.contactId)
  await relayHub(c.env).dispatchSend(record.sid, send.message, send.expiresAt)
  return { pending: true }
}
