/**
 * The inbound step inside the AccountDO: one D1 batch stores the contact, the message and its `message.received`
 * event (the event only if the message was new), then the person's loop-guard counter starts over and open waits
 * are woken. An upstream id seen before is answered as a duplicate and changes nothing.
 */
import { eq } from 'drizzle-orm'
import { messages } from '../../schema/d1'
import { displayName, getContact, upsertInboundContact, type ContactSeed } from '../db/contacts'
import { insertEventIfMessage } from '../db/events'
import { findByUpstreamId, insertInboundIfNew } from '../db/messages'
import { messageEventPayload } from '../events/payloads'
import { newId } from '../lib/ids'
import type { AccountContext } from './context'
import type { AccountRef } from './storage'

export type InboundInput = {
  ref: AccountRef
  contact: ContactSeed
  text: string
  mediaUrl: string | null
  mediaContentType: string | null
  /** The upstream's id for this message; a second delivery with the same id is a duplicate. */
  upstreamId: string | null
}

export type IngestOutcome =
  | { stored: true; messageId: string; contactId: string; duplicate: boolean }
  /** The contact is private: nothing about them is stored (spec 4.3). */
  | { stored: false; contactId: string; reason: 'contact_private' }

export async function ingestMessage(c: AccountContext, input: InboundInput): Promise<IngestOutcome> {
  const now = Date.now()
  const { ref, contact: seed } = input
  c.store.setRef(ref)

  const [existing, duplicate] = await Promise.all([
    getContact(c.db, ref.tenantId, seed.id),
    input.upstreamId ? findByUpstreamId(c.db, ref.tenantId, ref.accountId, 'inbound', input.upstreamId) : undefined,
  ])
  if (existing?.private) return { stored: false, contactId: seed.id, reason: 'contact_private' }
  if (duplicate) {
    c.store.recordDuplicateInbound(seed.id)
    return { stored: true, messageId: duplicate.id, contactId: duplicate.contactId, duplicate: true }
  }

  const messageId = newId('msg')
  const row = {
    id: messageId,
    tenantId: ref.tenantId,
    accountId: ref.accountId,
    contactId: seed.id,
    direction: 'inbound' as const,
    text: input.text,
    mediaUrl: input.mediaUrl,
    mediaContentType: input.mediaContentType,
    status: 'received' as const,
    upstreamId: input.upstreamId,
    createdAt: now,
    updatedAt: now,
  }
  const seedName = displayName({ name: seed.name ?? null, firstName: seed.firstName ?? null, lastName: seed.lastName ?? null })
  const contact = {
    id: seed.id,
    phone: seed.phone ?? existing?.phone ?? null,
    name: seedName ?? (existing ? displayName(existing) : null),
    external_id: seed.externalId ?? existing?.externalId ?? null,
  }
  const event = messageEventPayload('message.received', { ...row, errorMessage: null }, contact, ref.channel, now)
  const [, inserted] = await c.commit([
    upsertInboundContact(c.db, seed, input.text, now),
    insertInboundIfNew(c.db, row),
    insertEventIfMessage(c.db, ref.tenantId, ref.accountId, event, now, eq(messages.id, messageId)),
  ])
  if (inserted.length === 0) {
    // A concurrent delivery of the same upstream id won the insert.
    const winner = input.upstreamId ? await findByUpstreamId(c.db, ref.tenantId, ref.accountId, 'inbound', input.upstreamId) : undefined
    if (winner) return { stored: true, messageId: winner.id, contactId: winner.contactId, duplicate: true }
    throw new Error('inbound insert was skipped without a duplicate')
  }
  c.store.recordInbound(seed.id)
  c.waits.wakeAll()
  return { stored: true, messageId, contactId: seed.id, duplicate: false }
}
