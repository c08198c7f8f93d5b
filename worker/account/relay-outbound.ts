/**
 * Outbound on relay channels (alpha, beta). The queued D1 row stays the outbox: a send is handed to the relay holding
 * the account's lease and stays `queued` until that relay reports it handed to the upstream (`sent`, with the
 * upstream id, and `message.sent`) or refused (`failed`). Without a relay it waits; every reconnect hands it over
 * again (the relay and the upstream de-duplicate on the message id); 10 minutes after it was queued it fails with
 * `relay_unavailable`.
 */
import { and, eq } from 'drizzle-orm'
import { messages } from '../../schema/d1'
import type { OutboundMessage } from '../../schema/frames'
import type { OutboundChannel } from '../channels/outbound'
import { insertEventIfMessage } from '../db/events'
import { getMessage, queuedMessages, updateMessageStatus, type MessageWithContact } from '../db/messages'
import { messageEventFromRow } from '../events/payloads'
import { relayHub } from '../relay/hub-do'
import type { QueuedSend } from '../relay/inbox'
import type { AccountContext } from './context'
import { LINK_KEY, LinkState } from './link-state'
import type { AccountRef } from './storage'

/** A relay send not handed to the upstream this long after it was queued fails (spec: 10 minutes). */
export const RELAY_UNAVAILABLE_MS = 10 * 60_000
export const RELAY_UNAVAILABLE_ERROR = 'relay_unavailable: no relay handed this message to the network within 10 minutes'

export function isRelayChannel(channel: string): boolean {
  return channel === 'alpha_web' || channel === 'beta'
}

export function toQueuedSend(row: MessageWithContact): QueuedSend {
  const m = row.message
  const message: OutboundMessage = {
    messageId: m.id,
    to: { phone: row.contact?.phone ?? null, peerId: row.contact?.peerId ?? null },
    text: m.text,
    mediaUrl: m.mediaUrl,
  }
  return { message, expiresAt: m.createdAt + RELAY_UNAVAILABLE_MS }
}

/** Every send of the account still queued and not yet expired, oldest first. */
export async function queuedSends(c: AccountContext, ref: AccountRef): Promise<QueuedSend[]> {
  const now = Date.now()
  const rows = await queuedMessages(c.db, ref.tenantId, ref.accountId, Number.MAX_SAFE_INTEGER)
  return rows.filter((r) => r.message.createdAt + RELAY_UNAVAILABLE_MS > now).map(toQueuedSend)
}

/** The relay channel: hands the message to the hub. The outcome comes later, as a frame from the relay. */
export function relayOutbound(c: AccountContext): OutboundChannel {
  return async (row) => {
    const link = c.store.get(LINK_KEY, LinkState)
    if (!link) return { ok: false, code: null, error: 'the account has no linked session' }
    const send = toQueuedSend(row)
    // A reply from this person must land on the same contact, however the upstream addresses them.
    if (row.contact?.phone) c.store.rememberPeerContact([`phone:${row.contact.phone}`], row.message.contactId)
    await relayHub(c.env).dispatchSend(link.sid, send.message, send.expiresAt)
    return { pending: true }
  }
}

/**
 * The relay handed the message to the upstream. The event is inserted first, on the condition that the message is
 * still queued, then the status moves: both in one batch, so a repeated report changes nothing and emits nothing.
 */
export async function recordRelaySent(c: AccountContext, ref: AccountRef, messageId: string, upstreamId: string): Promise<void> {
  const row = await getMessage(c.db, ref.tenantId, messageId)
  if (!row || row.message.accountId !== ref.accountId || row.message.status !== 'queued') return
  const now = Date.now()
  const stillQueued = and(eq(messages.id, messageId), eq(messages.status, 'queued'))!
  const sent: MessageWithContact = { ...row, message: { ...row.message, status: 'sent', upstreamId, updatedAt: now } }
  await c.commit([
    insertEventIfMessage(c.db, ref.tenantId, ref.accountId, messageEventFromRow('message.sent', sent, ref.channel, now), now, stillQueued),
    updateMessageStatus(c.db, { status: 'sent', upstreamId }, now, stillQueued),
  ])
}

/** The upstream refused the message for good (the relay's driver said so): it fails with that reason. */
export async function recordRelaySendFailed(c: AccountContext, ref: AccountRef, messageId: string, error: string, code: number | null): Promise<void> {
  const row = await getMessage(c.db, ref.tenantId, messageId)
  if (!row || row.message.accountId !== ref.accountId || row.message.status !== 'queued') return
  const now = Date.now()
  const stillQueued = and(eq(messages.id, messageId), eq(messages.status, 'queued'))!
  const failed: MessageWithContact = { ...row, message: { ...row.message, status: 'failed', errorCode: code, errorMessage: error, updatedAt: now } }
  await c.commit([
    insertEventIfMessage(c.db, ref.tenantId, ref.accountId, messageEventFromRow('message.failed', failed, ref.channel, now), now, stillQueued),
    updateMessageStatus(c.db, { status: 'failed', errorCode: code, errorMessage: error }, now, stillQueued),
  ])
}
