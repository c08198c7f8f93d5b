/**
 * The inbound step inside the AccountDO, one path for a single push and a relay's burst: per message three
 * statements, with no read before or after them. Upsert the contact (it answers the contact's wire columns and the
 * message already stored under the upstream id, if any), insert the message unless that upstream id is stored or
 * the contact is private (it answers the new row's id and seq), and insert `message.received` only if that insert
 * happened. The statements are compiled once per isolate (db/compiled.ts) and go through the account's group commit
 * (`c.inbound`), so concurrent pushes and the messages of a burst share D1 batches, in order. A new message restarts
 * the person's loop-guard counter and wakes the open waits; a duplicate changes nothing.
 */
import { z } from 'zod'
import type { StoredItem } from '../media/inbound'
import { getAccount } from '../db/accounts'
import { upsertInboundContact, UpsertedInboundContact, type ContactSeed } from '../db/contacts'
import { insertReceivedEvent } from '../db/events'
import { InsertedInbound, insertInboundUnlessPrivate } from '../db/messages'
import { toWireMessage, type WireContactFacts } from '../db/wire'
import { messageEventPayload } from '../events/payloads'
import { newId } from '../lib/ids'
import type { AccountContext } from './context'
import type { AccountRef } from './storage'
import { countInbound, writeInboundTallySoon } from './totals'

/** What the contact upsert answers (always one row) and what the message insert answers (a row if it inserted). */
const UpsertAnswer = z.object({ results: z.tuple([UpsertedInboundContact]) })
const InsertAnswer = z.object({ results: z.array(InsertedInbound).max(1) })

export type InboundItem = {
  contact: ContactSeed
  text: string
  mediaUrl: string | null
  mediaContentType: string | null
  /** An item in the media store (relay inbound): its id, kind, size, name, and why it is not stored if over the cap. */
  stored?: StoredItem | null
  /** The upstream's id for this message; a second delivery with the same id is a duplicate. */
  upstreamId: string | null
  /** The upstream id of the message this one quotes, when it is a reply (issue 25). */
  replyTo?: string | null
}

export type InboundInput = InboundItem & { ref: AccountRef }

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
  const [outcome] = await ingestMessages(c, input.ref, [input])
  return outcome!
}

/**
 * Stores messages of one account in the order given. Each message is queued with its own statements, so a batch
 * that fails is retried message by message and one bad message fails only itself; the others are stored and the
 * first failure is thrown once all have settled.
 */
export async function ingestMessages(c: AccountContext, ref: AccountRef, items: InboundItem[]): Promise<IngestOutcome[]> {
  const now = Date.now()
  c.store.setRef(ref)
  if (!(await accountExists(c, ref))) return items.map((i) => ({ stored: false, contactId: i.contact.id, reason: 'account_not_found' }))
  // Open waits are handed this commit's rows (ingestOne); they are the ones the latency is for.
  const listening = c.waits.open > 0
  const settled = await Promise.allSettled(items.map((item) => ingestOne(c, ref, item, now)))
  // Already written by the microtask as a rule; written here too so no answer leaves before its guard resets are stored.
  writeCommitted(c)
  // Let the woken waits' answers leave before the pusher's: one turn of the event loop. The bridge, relay or provider
  // that pushed only learns that its message is stored; the agent waiting for it gets it about half a millisecond
  // sooner under wrangler dev (push sent → wait returned 7.00 against 7.59 ms, docs/performance-history.md).
  if (listening) await c.later(0)
  const outcomes: IngestOutcome[] = []
  for (const s of settled) {
    if (s.status === 'rejected') throw s.reason
    outcomes.push(s.value)
  }
  return outcomes
}

/** Queues one message's statements at once (callers keep the order) and applies its outcome when they commit. */
function ingestOne(c: AccountContext, ref: AccountRef, item: InboundItem, now: number): Promise<IngestOutcome> {
  const seed = item.contact
  const row = {
    id: newId('msg'),
    tenantId: ref.tenantId,
    accountId: ref.accountId,
    contactId: seed.id,
    text: item.text,
    mediaUrl: item.mediaUrl,
    mediaContentType: item.mediaContentType,
    mediaId: item.stored?.id ?? null,
    mediaKind: item.stored?.kind ?? null,
    mediaSize: item.stored?.size ?? null,
    mediaFileName: item.stored?.fileName ?? null,
    mediaError: item.stored?.error ?? null,
    mediaStatus: item.stored?.status ?? null,
    upstreamId: item.upstreamId,
    replyTo: item.replyTo ?? null,
  }
  const facts = { ...row, direction: 'inbound' as const, status: 'received' as const, errorMessage: null }
  // The contact part is filled in by SQL from the stored contact row (insertReceivedEvent).
  const payload = messageEventPayload('message.received', facts, { id: seed.id, phone: null, name: null }, ref.channel, now)
  const written = c.inbound.write([
    upsertInboundContact(c.db, seed, item.text, item.upstreamId, now),
    insertInboundUnlessPrivate(c.db, row, now),
    insertReceivedEvent(c.db, ref.tenantId, ref.accountId, payload, row, now),
  ])
  return written.then(
    (results): IngestOutcome => {
      const [contact] = UpsertAnswer.parse(results[0]).results
      const [inserted] = InsertAnswer.parse(results[1]).results
      if (!inserted) {
        // Nothing stored under its upstream id before this batch: the insert was refused for a private contact.
        const prior = contact.prior
        if (prior === null) return { stored: false, contactId: seed.id, reason: 'contact_private' }
        // A duplicate, whatever the contact is now (a person made private keeps what was stored before). Usually a
        // re-push of an old message; but it may be this message's own earlier batch that landed although its answer
        // was lost (and was retried): then open waits never got it, so they read D1 again.
        c.waits.unsure()
        c.store.recordDuplicateInbound(prior.contactId)
        return { stored: true, messageId: prior.id, contactId: prior.contactId, duplicate: true }
      }
      // Written once for the whole commit (its writers' answers all run before the microtask), not once per message.
      if (c.store.recordInbound(seed.id)) queueMicrotask(() => writeCommitted(c))
      countInbound(c.store)
      // Open waits are answered from this commit (its wire shape, with the contact as the batch left it, and the quote
      // as the insert stored it): no re-read, and the same message a read of D1 would give.
      const stored = { ...facts, replyTo: inserted.reply_to, errorCode: null, createdAt: now }
      c.waits.committed([{ seq: inserted.seq, message: toWireMessage({ message: stored, contact: contactOf(contact) }) }])
      return { stored: true, messageId: row.id, contactId: seed.id, duplicate: false }
    },
    (err: unknown) => {
      // The batch may have landed: waits cannot know what it wrote, so they read D1 again.
      c.waits.unsure()
      throw err
    }
  )
}

/**
 * The loop-guard resets of the messages committed so far, written in one go per burst, before any answer leaves;
 * their inbound tally is written a moment later, off the answers' path (totals.ts says why).
 */
function writeCommitted(c: AccountContext): void {
  c.store.writeGuardResets()
  writeInboundTallySoon(c.store, c)
}

function contactOf(f: UpsertedInboundContact): WireContactFacts {
  return {
    phone: f.phone,
    name: f.name,
    firstName: f.first_name,
    lastName: f.last_name,
    externalId: f.external_id,
    channel: f.channel,
    username: f.username,
    aiPaused: f.ai_paused === 1,
  }
}
