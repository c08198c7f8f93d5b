/**
 * The inbound step inside the AccountDO: four statements, with no read before them. Upsert the contact, insert the
 * message unless its upstream id is already stored or the contact is private, insert `message.received` only if
 * that insert happened, then read back which message holds the upstream id. They go through the account's group
 * commit (`c.inbound`), so concurrent messages share one D1 round trip. A new message restarts the person's
 * loop-guard counter and wakes the open waits; a duplicate changes nothing.
 */
import { z } from 'zod'
import { getAccount } from '../db/accounts'
import { upsertInboundContact, type ContactSeed } from '../db/contacts'
import { insertReceivedEvent } from '../db/events'
import { findInbound, insertInboundUnlessPrivate } from '../db/messages'
import { messageEventPayload } from '../events/payloads'
import { newId } from '../lib/ids'
import type { AccountContext } from './context'
import type { AccountRef } from './storage'

/** What `findInbound` reads back (the batch results come back untyped through the group commit). */
const StoredInbound = z.array(z.object({ id: z.string(), contactId: z.string() }))

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
  /** The account does not exist (any more). */
  | { stored: false; contactId: string; reason: 'account_not_found' }

/**
 * Whether the account exists, read from D1 once and then remembered: every removal goes through
 * `AccountDO.removed()`, which forgets it. Saves the inbound path a D1 read per message.
 */
async function accountExists(c: AccountContext, ref: AccountRef): Promise<boolean> {
  if (c.store.knownToExist()) return true
  const removals = c.store.removals
  if (!(await getAccount(c.db, ref.tenantId, ref.accountId))) return false
  // Removed while we read: the row we saw is gone now, so do not remember it.
  if (c.store.removals !== removals) return false
  c.store.markExists()
  return true
}

export async function ingestMessage(c: AccountContext, input: InboundInput): Promise<IngestOutcome> {
  const now = Date.now()
  const { ref, contact: seed } = input
  c.store.setRef(ref)
  if (!(await accountExists(c, ref))) return { stored: false, contactId: seed.id, reason: 'account_not_found' }
  const row = {
    id: newId('msg'),
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
  // The contact part is filled in by SQL from the stored contact row (insertReceivedEvent).
  const payload = messageEventPayload('message.received', { ...row, errorMessage: null }, { id: seed.id, phone: null, name: null }, ref.channel, now)
  const results = await c.inbound.write([
    upsertInboundContact(c.db, seed, input.text, now),
    insertInboundUnlessPrivate(c.db, row),
    insertReceivedEvent(c.db, ref.tenantId, ref.accountId, payload, row.id, now),
    findInbound(c.db, ref.tenantId, ref.accountId, input.upstreamId, row.id),
  ])
  const stored = StoredInbound.parse(results[3])[0]
  if (!stored) return { stored: false, contactId: seed.id, reason: 'contact_private' }
  if (stored.id !== row.id) {
    c.store.recordDuplicateInbound(stored.contactId)
    return { stored: true, messageId: stored.id, contactId: stored.contactId, duplicate: true }
  }
  c.store.recordInbound(seed.id)
  c.waits.wakeAll()
  return { stored: true, messageId: row.id, contactId: seed.id, duplicate: false }
}
