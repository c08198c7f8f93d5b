/**
 * Lifetime tallies of one account for GET /admin/metrics: inbound messages stored, sends accepted, and sends refused
 * by each limit. Kept in the AccountDO's own storage and written beside the writes a message already makes there
 * (the inbound contact's guard, the send's daily counters), so counting adds no D1 statement to any message.
 */
import { z } from 'zod'
import type { AccountContext } from './context'
import type { AccountStore } from './storage'

export const Totals = z.object({
  inbound: z.number().int().min(0),
  outbound: z.number().int().min(0),
  /** Refusals by the limit's code (daily_send_cap, new_contact_cap, loop_guard, opener_burst, account_suspended, …). */
  refused: z.record(z.string(), z.number().int().min(0)),
})
export type Totals = z.infer<typeof Totals>

const KEY = 'totals'
export const NO_TOTALS: Totals = { inbound: 0, outbound: 0, refused: {} }

/** The totals, with the inbound messages committed but not yet written (`countInbound`) already in them. */
export function totalsOf(store: AccountStore): Totals {
  const t = store.get(KEY, Totals) ?? NO_TOTALS
  return store.inboundUntallied === 0 ? t : { ...t, inbound: t.inbound + store.inboundUntallied }
}

/** Adds one accepted send, or one refusal by `refused`. */
export function tally(store: AccountStore, what: { outbound: 1 } | { refused: string }): void {
  const t = totalsOf(store)
  store.inboundUntallied = 0
  if ('outbound' in what) store.put(KEY, { ...t, outbound: t.outbound + 1 })
  else store.put(KEY, { ...t, refused: { ...t.refused, [what.refused]: (t.refused[what.refused] ?? 0) + 1 } })
}

/**
 * How long after a commit its inbound messages are added to the stored totals. The write is kept off the replies:
 * a Durable Object holds every reply that leaves while a storage write is not yet durable, and the tally is the only
 * value an inbound commit changes in the object's storage (a guard reset rewrites an unchanged row, which SQLite
 * skips), so writing it with the commit held each push's answer and each woken wait for a sync of its own (under
 * `wrangler dev`, one fsync per push). Reads add what is not written yet (`totalsOf`). The price: a restart of the
 * object within this time loses those messages from the lifetime count (GET /admin/metrics), not the messages.
 */
export const INBOUND_TALLY_DELAY_MS = 1_000

/**
 * Counts one stored inbound message in memory: `writeInboundTally` adds the messages of the last
 * INBOUND_TALLY_DELAY_MS to storage in one write, and reads count them before that.
 */
export function countInbound(store: AccountStore): void {
  store.inboundUntallied++
}

/**
 * Schedules the write of the counted inbound messages INBOUND_TALLY_DELAY_MS from now, unless one is already due
 * (so a burst of commits makes one write, not one each).
 */
export function writeInboundTallySoon(store: AccountStore, timers: Pick<AccountContext, 'later' | 'background'>): void {
  if (store.inboundUntallied === 0 || store.tallyDue) return
  store.tallyDue = true
  timers.background(
    timers.later(INBOUND_TALLY_DELAY_MS).then(() => {
      store.tallyDue = false
      writeInboundTally(store)
    })
  )
}

export function writeInboundTally(store: AccountStore): void {
  if (store.inboundUntallied === 0) return
  const t = totalsOf(store)
  store.inboundUntallied = 0
  store.put(KEY, t)
}
