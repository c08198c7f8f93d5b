/**
 * Outbound delivery from the AccountDO. The queued row in D1 is the outbox: a send starts one attempt right away,
 * and the `delivery` timer (armed before the row is written) sweeps whatever is still queued, so a message is
 * either handed over or marked failed even if the object is evicted mid-attempt. Never stuck in `queued`.
 */
import { and, eq } from 'drizzle-orm'
import { messages } from '../../schema/d1'
import { customOutbound } from '../channels/custom/outbound'
import type { DeliveryResult, OutboundChannel } from '../channels/outbound'
import { insertEventIfMessage } from '../db/events'
import { getMessage, hasQueued, markAttempt, queuedMessages, updateMessageStatus, type MessageWithContact, type StatusChange } from '../db/messages'
import { messageEventFromRow } from '../events/payloads'
import type { AccountContext } from './context'
import { isRelayChannel, relayOutbound, RELAY_UNAVAILABLE_ERROR, RELAY_UNAVAILABLE_MS } from './relay-outbound'
import type { AccountRef } from './storage'

/** An attempt not finished after this long was interrupted (the object was evicted); the sweep takes it over. */
export const DELIVERY_LEASE_MS = 30_000
/** Interrupted attempts allowed before the message is marked failed. */
export const MAX_DELIVERY_ATTEMPTS = 3

function channelFor(c: AccountContext, ref: AccountRef): OutboundChannel {
  switch (ref.channel) {
    case 'custom':
      return customOutbound(c, ref)
    case 'alpha_web':
    case 'beta':
      return relayOutbound(c)
    default:
      return async () => ({ ok: false, code: null, error: `sending on the ${ref.channel} channel is not available yet` })
  }
}

export async function deliverMessage(c: AccountContext, messageId: string): Promise<void> {
  const ref = c.store.ref()
  if (!ref) return
  const started = await markAttempt(c.db, messageId, Date.now())
  if (!started) return
  const row = await getMessage(c.db, ref.tenantId, messageId)
  if (!row) return
  let result: DeliveryResult
  try {
    result = await channelFor(c, ref)(row)
  } catch (err) {
    result = { ok: false, code: null, error: `delivery failed: ${err instanceof Error ? err.message : String(err)}` }
  }
  if ('pending' in result) return
  await finishDelivery(c, ref, row, started.attempts, result)
}

/**
 * Records an attempt's outcome and its event in one batch. Both are conditional on the message still being queued
 * by this same attempt, so an overtaken attempt changes nothing and no event is emitted twice.
 */
export async function finishDelivery(c: AccountContext, ref: AccountRef, row: MessageWithContact, attempt: number, result: Exclude<DeliveryResult, { pending: true }>) {
  const now = Date.now()
  const status = result.ok ? ('sent' as const) : ('failed' as const)
  const change: StatusChange = result.ok
    ? { status, upstreamId: result.upstreamId ?? row.message.upstreamId }
    : { status, errorCode: result.code, errorMessage: result.error }
  const updated: MessageWithContact = { ...row, message: { ...row.message, ...change, updatedAt: now } }
  const thisAttempt = (s: 'queued' | typeof status) =>
    and(eq(messages.id, row.message.id), eq(messages.status, s), eq(messages.attempts, attempt))!
  const event = messageEventFromRow(result.ok ? 'message.sent' : 'message.failed', updated, ref.channel, now)
  await c.commit([
    updateMessageStatus(c.db, change, now, thisAttempt('queued')),
    insertEventIfMessage(c.db, ref.tenantId, ref.accountId, event, now, thisAttempt(status)),
  ])
}

/**
 * The `delivery` timer: retries interrupted attempts, fails messages that were interrupted too often. On relay
 * channels a hand-over is retried every lease until the relay reports it, and fails with relay_unavailable once the
 * message has waited RELAY_UNAVAILABLE_MS.
 */
export async function sweepDeliveries(c: AccountContext): Promise<void> {
  const ref = c.store.ref()
  if (!ref) return
  const now = Date.now()
  const stale = await queuedMessages(c.db, ref.tenantId, ref.accountId, now - DELIVERY_LEASE_MS)
  for (const row of stale) {
    if (isRelayChannel(ref.channel)) {
      if (now >= row.message.createdAt + RELAY_UNAVAILABLE_MS) {
        await finishDelivery(c, ref, row, row.message.attempts, { ok: false, code: null, error: RELAY_UNAVAILABLE_ERROR })
      } else {
        await deliverMessage(c, row.message.id)
      }
    } else if (row.message.attempts >= MAX_DELIVERY_ATTEMPTS) {
      await finishDelivery(c, ref, row, row.message.attempts, {
        ok: false,
        code: null,
        error: 'delivery was interrupted repeatedly and was given up',
      })
    } else {
      await deliverMessage(c, row.message.id)
    }
  }
  if (await hasQueued(c.db, ref.tenantId, ref.accountId)) await c.schedule('delivery', Date.now() + DELIVERY_LEASE_MS)
  else await c.unschedule('delivery')
}

/** Fails every message of the account that is still queued (the account went away). */
export async function failQueued(c: AccountContext, reason: string): Promise<void> {
  const ref = c.store.ref()
  if (!ref) return
  for (const row of await queuedMessages(c.db, ref.tenantId, ref.accountId, Number.MAX_SAFE_INTEGER)) {
    await finishDelivery(c, ref, row, row.message.attempts, { ok: false, code: null, error: reason })
  }
}
