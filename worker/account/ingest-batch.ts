/**
 * Group commit for a relay's inbound burst: several messages of one account stored in ONE D1 batch, with exactly
 * the semantics of ingest.ts (private contacts skipped, upstream ids de-duplicated, `message.received` only for
 * what was new, loop guards restarted, waits woken). A D1 commit costs far more than its statements, so a burst
 * is stored at the speed of commits times the batch size instead of one commit per message. A single message
 * still goes through ingest.ts.
 * TODO: fold into ingest.ts once it takes an array (the lead's single-batch restructuring), leaving one path.
 */
import type { BatchItem } from 'drizzle-orm/batch'
import { z } from 'zod'
import { displayName, getContacts, optOutChange, upsertInboundContact, upsertInboundContacts, type ContactSeed } from '../db/contacts'
import { insertEventsIfMessages } from '../db/events'
import { insertInboundRows } from '../db/messages'
import { messageEventPayload } from '../events/payloads'
import { newId } from '../lib/ids'
import type { AccountContext } from './context'
import type { AccountRef } from './storage'

const InsertedIds = z.array(z.object({ id: z.string() }))

export type BatchItemInput = {
  contact: ContactSeed
  text: string
  mediaUrl: string | null
  mediaContentType: string | null
  upstreamId: string
}

export type BatchOutcome = { stored: number; duplicates: number; private: number }

export async function ingestBatch(c: AccountContext, ref: AccountRef, items: BatchItemInput[]): Promise<BatchOutcome> {
  const now = Date.now()
  c.store.setRef(ref)
  // No read for duplicates: the insert skips an upstream id already stored (unique index) and its event follows the
  // insert, so a resent message changes nothing; the batch's results say which were new.
  const known = await getContacts(c.db, ref.tenantId, [...new Set(items.map((i) => i.contact.id))])
  const byId = new Map(known.map((k) => [k.id, k]))
  const inBatch = new Set<string>()
  const outcome: BatchOutcome = { stored: 0, duplicates: 0, private: 0 }

  const fresh: Array<{ item: BatchItemInput; messageId: string }> = []
  for (const item of items) {
    if (byId.get(item.contact.id)?.private) {
      outcome.private++
      continue
    }
    if (inBatch.has(item.upstreamId)) {
      outcome.duplicates++
      continue
    }
    inBatch.add(item.upstreamId)
    fresh.push({ item, messageId: newId('msg') })
  }
  if (fresh.length === 0) return outcome

  // Multi-row statements: a D1 commit's cost grows with its statements far more than with its rows.
  const rows = []
  const events = []
  const lastText = new Map<string, { seed: ContactSeed; text: string }>()
  for (const { item, messageId } of fresh) {
    const seed = item.contact
    const existing = byId.get(seed.id)
    const row = {
      id: messageId,
      tenantId: ref.tenantId,
      accountId: ref.accountId,
      contactId: seed.id,
      direction: 'inbound' as const,
      text: item.text,
      mediaUrl: item.mediaUrl,
      mediaContentType: item.mediaContentType,
      status: 'received' as const,
      upstreamId: item.upstreamId,
      createdAt: now,
      updatedAt: now,
    }
    rows.push(row)
    const seedName = displayName({ name: seed.name ?? null, firstName: seed.firstName ?? null, lastName: seed.lastName ?? null })
    const contact = {
      id: seed.id,
      phone: seed.phone ?? existing?.phone ?? null,
      name: seedName ?? (existing ? displayName(existing) : null),
      external_id: seed.externalId ?? existing?.externalId ?? null,
    }
    events.push({ payload: messageEventPayload('message.received', { ...row, errorMessage: null }, contact, ref.channel, now), messageId })
    // One upsert per person: the last STOP/START of theirs in the batch decides, as message-by-message would.
    const prev = lastText.get(seed.id)
    if (!prev || optOutChange(item.text) !== undefined || optOutChange(prev.text) === undefined) lastText.set(seed.id, { seed, text: item.text })
  }
  const people = [...lastText.values()]
  const contacts = [
    ...upsertInboundContacts(c.db, people.filter((p) => optOutChange(p.text) === undefined).map((p) => p.seed), now),
    ...people.filter((p) => optOutChange(p.text) !== undefined).map(({ seed, text }) => upsertInboundContact(c.db, seed, text, now)),
  ]
  const inserts = insertInboundRows(c.db, rows)
  const statements: BatchItem<'sqlite'>[] = [...contacts, ...inserts, ...insertEventsIfMessages(c.db, ref.tenantId, ref.accountId, events, now)]
  const [first, ...rest] = statements
  const results = await c.commit([first!, ...rest])
  const inserted = new Set(results.slice(contacts.length, contacts.length + inserts.length).flatMap((r) => InsertedIds.parse(r).map((x) => x.id)))
  for (const { item, messageId } of fresh) {
    if (inserted.has(messageId)) {
      c.store.recordInbound(item.contact.id)
      outcome.stored++
    } else {
      // Stored before (a resend after a reconnect): proof the person wrote, but their counter does not restart again.
      c.store.recordDuplicateInbound(item.contact.id)
      outcome.duplicates++
    }
  }
  c.waits.wakeAll()
  return outcome
}
