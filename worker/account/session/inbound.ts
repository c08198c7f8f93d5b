/**
 * Frames a relay brings in for this account, other than state: inbound messages (stored through the one ingest
 * path, de-duplicated on the upstream id), contacts to import, and the encrypted session it persists here.
 */
import { z } from 'zod'
import type { ImportedContact, InboundMessage, InboundReaction } from '../../../schema/frames'
import type { AccountContext } from '../context'
import { importContacts } from './contacts-import'
import { ingestMessages, type InboundItem } from '../ingest'
import { receiveReaction } from '../reactions'
import { currentSession } from './lifecycle'
import { SESSION_KEY, SESSION_FENCE_KEY } from './state'
import { contactIdsByPhone } from '../../db/contacts'
import { inboundMedia } from '../../media/inbound'
import { e164, inboundContactSeed, peerAddresses } from './peers'
import type { AccountRef } from '../storage'

/** `last_activity` of the status answer is exact to this much. */
const ACTIVITY_WRITE_EVERY_MS = 5_000

/**
 * Inbound messages of one session, in order (several when the hub group-commits a burst), stored through the one
 * ingest path. People seen for the first time are looked up together: one D1 read for the burst, not one per person.
 */
export async function onRelayInbound(c: AccountContext, ref: AccountRef, sid: string, ms: z.infer<typeof InboundMessage>[]): Promise<void> {
  const record = currentSession(c)
  // The account was removed (or linked anew): nothing of the old session is stored.
  if (!record || record.sid !== sid || ms.length === 0) return
  const fresh = [
    ...new Set(
      ms.flatMap((m) => (peerAddresses(m.from).some((a) => c.store.peerContact(a)) ? [] : [e164(m.from.phone)]).filter((p): p is string => p !== null))
    ),
  ]
  const byPhone = fresh.length > 0 ? await contactIdsByPhone(c.db, ref.tenantId, ref.accountId, fresh) : new Map<string, string>()
  const items: InboundItem[] = []
  for (const m of ms) {
    items.push({
      contact: await inboundContactSeed(c, ref, m.from, (phone) => byPhone.get(phone)),
      text: m.text,
      ...(await inboundMedia(ref, m)),
      upstreamId: m.upstreamId,
      replyTo: m.replyTo ?? null,
    })
  }
  await ingestMessages(c, ref, items)
  // Stored at most every few seconds: every storage write holds the reply back until it is durable.
  const now = Date.now()
  if (now - (record.lastActivityAt ?? 0) > ACTIVITY_WRITE_EVERY_MS) c.store.put(SESSION_KEY, { ...record, lastActivityAt: now })
}

/** A person's reaction in the session's chats: applied to the message it names (account/reactions.ts). */
export async function onRelayReaction(c: AccountContext, ref: AccountRef, sid: string, r: z.infer<typeof InboundReaction>): Promise<void> {
  if (currentSession(c)?.sid !== sid) return
  await receiveReaction(c, ref, { upstreamId: r.upstreamId, emoji: r.emoji || null, at: r.at })
}

export async function onRelayContacts(c: AccountContext, ref: AccountRef, sid: string, contacts: z.infer<typeof ImportedContact>[]): Promise<number> {
  const record = currentSession(c)
  if (!record || record.sid !== sid) return 0
  const n = await importContacts(c, ref, record, contacts)
  if (n > 0) c.store.put(SESSION_KEY, { ...(currentSession(c) ?? record), contactsImported: true })
  return n
}

export function sessionEntriesFor(c: AccountContext, sid: string): Record<string, string> {
  const record = currentSession(c)
  return record && record.sid === sid ? c.store.sessionEntries() : {}
}

/** Why a session write was refused; the hub answers the relay with a `reject` carrying it. */
export type SessionWriteRefusal = 'stale_fence' | 'unknown_session'

/**
 * Stores a relay's session update. The fencing number only goes up: a relay that lost the lease but has not
 * noticed yet cannot overwrite what the new holder wrote. A refusal is answered, never dropped: an unanswered write
 * is sent again forever while the credentials it carries are never stored (issue 14 §1).
 */
export function writeSessionEntries(
  c: AccountContext,
  sid: string,
  fence: number,
  clear: boolean,
  changes: Record<string, string | null>
): SessionWriteRefusal | null {
  const record = currentSession(c)
  if (!record || record.sid !== sid) return 'unknown_session'
  const stored = c.store.get(SESSION_FENCE_KEY, z.number()) ?? 0
  if (fence < stored) return 'stale_fence'
  if (fence > stored) c.store.put(SESSION_FENCE_KEY, fence)
  c.store.writeSessionEntries(clear, changes)
  return null
}
