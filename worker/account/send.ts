/**
 * The send step inside the AccountDO: every guard check and the counter update happen with no await in between,
 * then the queued message (and any events) are written to D1 in one batch. If that write fails the send takes back
 * its own part of the counters (not a snapshot: sends accepted while it waited stay counted), so a send that did not
 * happen costs nothing. Delivery starts after the answer, in the background.
 */
import { accountStatusUpdate, getAccount } from '../db/accounts'
import { insertContactIfMissing, type ContactSeed } from '../db/contacts'
import { insertEvent } from '../db/events'
import { insertMessage } from '../db/messages'
import { toWireContact } from '../db/wire'
import { directory } from '../db/shards'
import { suspendTenant } from '../db/tenants'
import type { BatchItem } from 'drizzle-orm/batch'
import type { z } from 'zod'
import type { SendAllowances } from '../../schema/api/actions'
import { failHeldMessage, releaseHeldMessage } from '../db/approvals'
import { accountEventPayload, limitReachedPayload, messageEventPayload } from '../events/payloads'
import { planOf } from '../plans'
import type { AccountContext } from './context'
import { deliverMessage, DELIVERY_LEASE_MS } from './delivery'
import {
  checkSend,
  countersFor,
  countSend,
  EMPTY_GUARD,
  giveBackCounters,
  giveBackGuard,
  isNewContact,
  limitsToFire,
  LOOP_GUARD_SENDS,
  OPENER_WINDOW_MS,
  openerKey,
  type ContactGuard,
  type Refusal,
  type SendCheck,
} from './guards'
import { governingRisk, storedRisk } from './risk'
import { rampAllowance, rampDay, NEW_RAMP } from './ramp'
import type { AccountRef } from './storage'
import { tally } from './totals'

export type SendInput = {
  ref: AccountRef
  tenant: { plan: string; suspended: boolean }
  messageId: string
  /** The recipient; `hasInbound` comes from D1 and seeds the guard state the first time this object sees them. */
  contact: ContactSeed & { hasInbound: boolean }
  text: string
  mediaUrl: string | null
  mediaContentType: string | null
  /** The message this one quotes (issue 25: our id, checked by the route). */
  replyTo?: string | null
  /**
   * The message already exists as `awaiting_approval` (docs/agent-safety.md) and its owner approved it: every
   * limit runs now; accepted, it becomes `queued`; refused, it fails with the limit's code.
   */
  held?: boolean
}

/** Today's sends of the account against its cap after this send (the route's `RateLimit` header for the daily cap). */
export type SendsToday = { used: number; cap: number }

export type SendOutcome = ({ ok: true; messageId: string } | { ok: false; refusal: Refusal }) & { sendsToday: SendsToday }

/** A dry run's question (issue 25): a send as the route would hand it over, without an id; no contact when the route stopped before. */
export type SendProbe = Pick<SendInput, 'ref' | 'tenant' | 'text'> & { contact: SendInput['contact'] | null }

/** What a dry run answers: the guards' verdict and whether the person would be a new contact (null without a person), and what is left today. */
export type ProbeOutcome = { check: SendCheck | null; newContact: boolean | null; allowances: z.infer<typeof SendAllowances> }

/** Today's new-contact allowance and ramp day: channels with a warm-up (alpha) ramp up, the others get the plan cap. */
export function allowanceFor(c: AccountContext, ref: AccountRef, planCap: number, now: number) {
  if (!c.channels(ref.channel).warmUp) return { allowance: planCap, rampDay: null }
  const ramp = c.store.ramp() ?? NEW_RAMP
  return { allowance: rampAllowance(ramp, now, planCap), rampDay: rampDay(ramp, now) }
}

/**
 * The guards' decision for a send from this object's state as it is now, and everything it was made from. A real send
 * and a dry run both take it from here, so a dry run answers what the send would: it only reads.
 */
function evaluateSend(c: AccountContext, input: SendProbe & { contact: SendInput['contact'] }, now: number) {
  const { ref, contact } = input
  const plan = planOf(input.tenant.plan)
  const counters = countersFor(c.store.counters(), now)
  const guard: ContactGuard = c.store.contactGuard(contact.id) ?? { ...EMPTY_GUARD, hasInbound: contact.hasInbound }
  const { allowance, rampDay } = allowanceFor(c, ref, plan.newContactsPerDay, now)
  const opener = openerKey(input.text)
  const risk = governingRisk(storedRisk(c), now)
  const check = checkSend({
    now,
    plan,
    suspended: input.tenant.suspended,
    counters,
    contact: guard,
    newContactAllowance: allowance,
    rampDay,
    sameOpenerCount: c.store.countOpeners(opener, now - OPENER_WINDOW_MS),
    risk,
  })
  return { plan, counters, guard, allowance, rampDay, opener, risk, check }
}

/** What is left today before a send (a dry run's `allowances`): read, never written. */
function allowancesNow(c: AccountContext, ref: AccountRef, planName: string, guard: ContactGuard | null, now: number): z.infer<typeof SendAllowances> {
  const plan = planOf(planName)
  const counters = countersFor(c.store.counters(), now)
  const { allowance, rampDay } = allowanceFor(c, ref, plan.newContactsPerDay, now)
  const atRisk = governingRisk(storedRisk(c), now) !== null
  return {
    day: counters.day,
    sends_left: Math.max(0, plan.sendsPerDay - counters.sends),
    new_contacts_left: atRisk ? 0 : Math.max(0, allowance - counters.newContacts),
    sends_to_contact_left: guard === null ? null : Math.max(0, LOOP_GUARD_SENDS - guard.sendsSinceInbound),
    ramp_day: rampDay,
    at_risk: atRisk,
  }
}

/**
 * A dry run (issue 25): the guards' decision `sendMessage` would take now, and what is left, with nothing written: no
 * counter, no refusal tally, no limit event, no suspension.
 */
export function probeSend(c: AccountContext, probe: SendProbe): ProbeOutcome {
  const now = Date.now()
  if (!probe.contact) return { check: null, newContact: null, allowances: allowancesNow(c, probe.ref, probe.tenant.plan, null, now) }
  const e = evaluateSend(c, { ...probe, contact: probe.contact }, now)
  return { check: e.check, newContact: isNewContact(e.guard), allowances: allowancesNow(c, probe.ref, probe.tenant.plan, e.guard, now) }
}

export async function sendMessage(c: AccountContext, input: SendInput): Promise<SendOutcome> {
  const now = Date.now()
  const { ref, contact } = input
  c.store.setRef(ref)

  const { plan, counters, guard, allowance, opener, check } = evaluateSend(c, input, now)

  if (!check.ok) {
    await recordRefusal(c, input, check.refusal, allowance, now)
    if (input.held) await failHeld(c, input, `${check.refusal.code}: ${check.refusal.message}`, now)
    return { ...check, sendsToday: { used: counters.sends, cap: plan.sendsPerDay } }
  }

  // Accepted: bookkeeping first, synchronously, so a concurrent send already sees it.
  const next = countSend(counters, check.newContact)
  const fired = limitsToFire(next, plan, allowance)
  c.store.setCounters({ ...next, fired: [...next.fired, ...fired] })
  c.store.setContactGuard(contact.id, { ...guard, sendsSinceInbound: guard.sendsSinceInbound + 1, firstSentAt: guard.firstSentAt ?? now })
  if (check.newContact) c.store.addOpener(opener, contact.id, now, now - OPENER_WINDOW_MS)
  const inFlight = c.store.inFlight.begin(contact.id)

  try {
    await c.schedule('delivery', now + DELIVERY_LEASE_MS)
    const { hasInbound: _, ...seed } = contact
    await c.commit([
      insertContactIfMissing(c.db, seed, now),
      input.held
        ? releaseHeldMessage(c.db, input.messageId, now)
        : insertMessage(c.db, {
            id: input.messageId,
            tenantId: ref.tenantId,
            accountId: ref.accountId,
            contactId: contact.id,
            direction: 'outbound',
            text: input.text,
            mediaUrl: input.mediaUrl,
            mediaContentType: input.mediaContentType,
            replyTo: input.replyTo ?? null,
            status: 'queued',
            createdAt: now,
            updatedAt: now,
          }),
      ...fired.map((l) => insertEvent(c.db, ref.tenantId, ref.accountId, limitReachedPayload(l, now), now)),
    ])
  } catch (err) {
    // Give back this send's own part, read from the state as it is now: no await from here to the rethrow.
    const back = giveBackGuard(c.store.contactGuard(contact.id) ?? guard, check, inFlight.end())
    const stored = c.store.counters()
    if (stored) c.store.setCounters(giveBackCounters(stored, { day: counters.day, newContact: check.newContact && !back.keepsNewContact, fired }))
    c.store.setContactGuard(contact.id, back.guard)
    if (check.newContact && !back.keepsNewContact) c.store.removeOpener(contact.id, now)
    throw err
  }
  inFlight.end()
  tally(c.store, { outbound: 1 })

  c.background(deliverMessage(c, input.messageId))
  return { ok: true, messageId: input.messageId, sendsToday: { used: next.sends, cap: plan.sendsPerDay } }
}

/** An approved message that a limit refuses now fails with the limit's code (and message.failed). */
async function failHeld(c: AccountContext, input: SendInput, reason: string, now: number) {
  const { ref, contact } = input
  const event = messageEventPayload(
    'message.failed',
    {
      id: input.messageId,
      accountId: ref.accountId,
      direction: 'outbound',
      text: input.text,
      mediaUrl: input.mediaUrl,
      mediaContentType: input.mediaContentType,
      status: 'failed',
      errorMessage: reason,
    },
    toWireContact(
      {
        phone: contact.phone ?? null,
        name: contact.name ?? null,
        firstName: contact.firstName ?? null,
        lastName: contact.lastName ?? null,
        externalId: contact.externalId ?? null,
        channel: contact.channel,
        username: contact.username ?? null,
        aiPaused: false,
      },
      contact.id
    ),
    ref.channel,
    now
  )
  await c.commit(failHeldMessage(c.db, ref.tenantId, ref.accountId, input.messageId, reason, event, now))
}

/** A refusal changes no counter, but it may fire account.limit_reached (once a day) or suspend the tenant. */
async function recordRefusal(c: AccountContext, input: SendInput, refusal: Refusal, allowance: number, now: number) {
  const { ref } = input
  tally(c.store, { refused: refusal.code })
  const counters = countersFor(c.store.counters(), now)
  const fired = refusal.limit ? limitsToFire(counters, planOf(input.tenant.plan), allowance, refusal.limit) : []
  if (fired.length > 0) c.store.setCounters({ ...counters, fired: [...counters.fired, ...fired] })

  const writes: BatchItem<'sqlite'>[] = fired.map((l) => insertEvent(c.db, ref.tenantId, ref.accountId, limitReachedPayload(l, now), now))
  if (refusal.suspend) {
    const account = await getAccount(c.db, ref.tenantId, ref.accountId)
    writes.push(suspendTenant(c.db, ref.tenantId, refusal.code, now))
    if (account) {
      const restricted = { ...account, status: 'restricted' as const }
      writes.push(accountStatusUpdate(c.db, ref.tenantId, ref.accountId, { status: 'restricted', reason: refusal.code, now }))
      writes.push(insertEvent(c.db, ref.tenantId, ref.accountId, accountEventPayload('account.restricted', restricted, refusal.code, now), now))
    }
  }
  const [first, ...rest] = writes
  if (first) await c.commit([first, ...rest])
  // The suspension binds on the shard at once (a send reads it there fresh); the directory's row, which the admin
  // API and the key's cached tenant show, follows (db/tenants.ts). On shard 0 both are one row.
  if (refusal.suspend) await suspendTenant(directory(c.env), ref.tenantId, refusal.code, now)
}
