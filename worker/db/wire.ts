/** Converts stored rows into the wire shapes of the REST API (schema/api). */
import type { z } from 'zod'
import type { Message } from '../../schema/api/messages'
import { displayName, type ContactRow } from './contacts'
import type { MessageRow } from './messages'
import { iso } from '../lib/time'
import { parseReactions } from './reactions'
import { wireMedia, type MediaFacts } from './wire-media'

export type WireMessage = z.infer<typeof Message>
export type WireContact = WireMessage['contact']

/** What a wire contact is made of: a stored contact row, or the columns an inbound commit's upsert answered (account/ingest.ts). */
export type WireContactFacts = Pick<ContactRow, 'phone' | 'name' | 'firstName' | 'lastName' | 'externalId' | 'channel' | 'username' | 'aiPaused'>
/** What a wire message is made of. */
export type WireMessageFacts = {
  message: Pick<MessageRow, 'id' | 'accountId' | 'contactId' | 'direction' | 'text' | 'status' | 'errorCode' | 'errorMessage' | 'createdAt' | 'replyTo'> &
    Partial<Pick<MessageRow, 'reactions'>> &
    MediaFacts
  contact: WireContactFacts | null
}

export function toWireContact(contact: WireContactFacts | null, contactId: string): WireContact {
  return {
    id: contactId,
    phone: contact?.phone ?? null,
    name: contact ? displayName(contact) : null,
    external_id: contact?.externalId ?? null,
    ...(contact?.channel === 'beta' ? { username: contact.username ?? null } : {}),
    ai_paused: contact?.aiPaused ?? false,
  }
}

export function toWireMessage({ message: m, contact }: WireMessageFacts): WireMessage {
  const reactions = parseReactions(m.reactions ?? null)
  return {
    id: m.id,
    account_id: m.accountId,
    direction: m.direction,
    text: m.text,
    media: wireMedia(m),
    status: m.status,
    // A failure reason only on a failed message (spec 2); a queued one's last retry reason is `retry_reason` below.
    error: m.status === 'failed' && (m.errorCode !== null || m.errorMessage !== null) ? { code: m.errorCode, message: m.errorMessage } : null,
    timestamp: iso(m.createdAt),
    contact: toWireContact(contact, m.contactId),
    // Extensions (issue 25), present only when they say something, so every other message keeps spec 2's fields.
    ...(m.replyTo ? { reply_to: m.replyTo } : {}),
    ...(m.status === 'queued' && m.errorMessage !== null ? { retry_reason: m.errorMessage } : {}),
    ...(reactions.length > 0 ? { reactions: reactions.map((r) => ({ emoji: r.emoji, from: r.from, at: iso(r.at) })) } : {}),
  }
}
