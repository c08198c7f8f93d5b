/**
 * Outbound delivery from the AccountDO. The queued row in D1 is the outbox: a send starts one attempt right away,
 * and the `delivery` timer (armed before the row is written) sweeps whatever is still queued, so a message is
 * either handed over or marked failed even if the object is evicted mid-attempt. Never stuck in `queued`.
 * How a message leaves is its channel's transport: a direct channel's `deliver` (its outbound.ts), or for a relay-run
 * channel the account's session (session/outbound.ts); what the answer does to the message is decided here.
 */
import { and, eq } from 'drizzle-orm'
import { messages } from '../../schema/d1'
import { insertEventIfMessage } from '../db/events'
import {
  deferAttempt,
  getMessage,
  hasQueued,
  markAttempt,
  queuedMessages,
  updateMessageStatus,
  type MessageWithContact,
  type StatusChange,
} from '../db/messages'
import { messageEventFromRow } from '../events/payloads'
import type { AccountContext, ChannelRuntime, DeliveryResult } from './context'
import { handToRelay, RELAY_PATIENCE } from './session/outbound'
import type { AccountRef } from './storage'

/** An attempt not finished after this long was interrupted (the object was evicted); the sweep takes it over. */
export const DELIVERY_LEASE_MS = 30_000
/** Interrupted attempts allowed before the message is marked failed. */
export const MAX_DELIVERY_ATTEMPTS = 3

type Outcome = Exclude<DeliveryResult, { pending: true } | { retry: true }>

export async function deliverMessage(c: AccountContext, messageId: string): Promise<void> {
  const ref = c.store.ref()
  if (!ref) return
  const started = await markAttempt(c.db, messageId, Date.now())
  if (!started) return
  const row = await getMessage(c.db, ref.tenantId, messageId)
  if (!row) return
  let result: DeliveryResult
  try {
    const channel = c.channels(ref.channel)
    result = channel.transport === 'relay' ? await handToRelay(c, row) : await channel.deliver(c, ref, row)
  } catch (err) {
    result = { ok: false, code: null, error: `delivery failed: ${err instanceof Error ? err.message : String(err)}` }
  }
  if ('pending' in result) return
  if ('retry' in result) {
    // Still queued: the sweep takes it over once `at` comes (the lease counts from the deferred attempt time).
    await deferAttempt(c.db, messageId, result.at - DELIVERY_LEASE_MS, result.error)
    await c.schedule('delivery', Math.min(result.at, c.store.timerAt('delivery') ?? result.at))
    return
  }
  await finishDelivery(c, ref, row, result, started.attempts)
}

/**
 * Records a delivery's outcome and its event in one batch: `sent` (with the upstream id) or `failed` (with the
 * upstream's code and reason). Both are conditional on the message still being queued (by this same attempt, when
 * one is named), so an overtaken attempt or a repeated relay report changes nothing and emits nothing.
 */
export async function finishDelivery(c: AccountContext, ref: AccountRef, row: MessageWithContact, result: Outcome, attempt?: number): Promise<void> {
  const now = Date.now()
  const status = result.ok ? ('sent' as const) : ('failed' as const)
  const change: StatusChange = result.ok
    ? // A retry noted its error on the message; once sent, the message has none.
      { status, upstreamId: result.upstreamId ?? row.message.upstreamId, ...(row.message.errorMessage !== null ? { errorMessage: null } : {}) }
    : { status, errorCode: result.code, errorMessage: result.error }
  const updated: MessageWithContact = { ...row, message: { ...row.message, ...change, updatedAt: now } }
  const onlyIf = (s: 'queued' | typeof status) =>
    and(eq(messages.id, row.message.id), eq(messages.status, s), ...(attempt === undefined ? [] : [eq(messages.attempts, attempt)]))!
  const event = messageEventFromRow(result.ok ? 'message.sent' : 'message.failed', updated, ref.channel, now)
  await c.commit([
    insertEventIfMessage(c.db, ref.tenantId, ref.accountId, event, now, onlyIf('queued')),
    updateMessageStatus(c.db, change, now, onlyIf('queued')),
  ])
}

/** A relay reported the outcome of a send it was handed (relay frames `sent` / `send_failed`). */
export async function recordRelayOutcome(c: AccountContext, ref: AccountRef, messageId: string, result: Outcome): Promise<void> {
  const row = await getMessage(c.db, ref.tenantId, messageId)
  if (!row || row.message.accountId !== ref.accountId || row.message.status !== 'queued') return
  await finishDelivery(c, ref, row, result)
}

function gaveUp(channel: ChannelRuntime, row: MessageWithContact, now: number): Outcome | null {
  const patience = channel.transport === 'relay' ? RELAY_PATIENCE : channel.patience
  if (!patience || now < row.message.createdAt + patience.ms) return null
  const last = row.message.errorMessage
  return { ok: false, code: row.message.errorCode, error: last ? `${patience.error} (last: ${last})` : patience.error }
}

/**
 * The `delivery` timer: retries interrupted and deferred attempts, fails messages that waited past the channel's
 * patience or were interrupted too often. Relay channels re-offer every lease until the relay reports.
 */
export async function sweepDeliveries(c: AccountContext): Promise<void> {
  const ref = c.store.ref()
  if (!ref) return
  const channel = c.channels(ref.channel)
  const now = Date.now()
  const stale = await queuedMessages(c.db, ref.tenantId, ref.accountId, now - DELIVERY_LEASE_MS)
  for (const row of stale) {
    const expired = gaveUp(channel, row, now)
    if (expired) await finishDelivery(c, ref, row, expired, row.message.attempts)
    else if (channel.transport === 'direct' && row.message.attempts >= MAX_DELIVERY_ATTEMPTS) {
      await finishDelivery(c, ref, row, { ok: false, code: null, error: 'delivery was interrupted repeatedly and was given up' }, row.message.attempts)
    } else await deliverMessage(c, row.message.id)
  }
  const next = await nextSweepAt(c, ref, now)
  if (next !== null) await c.schedule('delivery', next)
  else await c.unschedule('delivery')
}

/** When the sweep must look again: at the earliest lease end of what is still queued, or never. */
async function nextSweepAt(c: AccountContext, ref: AccountRef, now: number): Promise<number | null> {
  const due = await hasQueued(c.db, ref.tenantId, ref.accountId)
  return due ? Math.max(now + 1_000, Math.min(now + DELIVERY_LEASE_MS, c.store.timerAt('delivery') ?? Number.MAX_SAFE_INTEGER)) : null
}

/** Fails every message of the account that is still queued (the account went away). */
export async function failQueued(c: AccountContext, reason: string): Promise<void> {
  const ref = c.store.ref()
  if (!ref) return
  for (const row of await queuedMessages(c.db, ref.tenantId, ref.accountId, Number.MAX_SAFE_INTEGER)) {
    await finishDelivery(c, ref, row, { ok: false, code: null, error: reason }, row.message.attempts)
  }
}
