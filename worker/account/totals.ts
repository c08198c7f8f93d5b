/**
 * Lifetime tallies of one account for GET /admin/metrics: inbound messages stored, sends accepted, and sends refused
 * by each limit. Kept in the AccountDO's own storage and written beside the writes a message already makes there
 * (the inbound contact's guard, the send's daily counters), so counting adds no D1 statement to any message.
 */
import { z } from 'zod'
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

export function totalsOf(store: AccountStore): Totals {
  return store.get(KEY, Totals) ?? NO_TOTALS
}

/** Adds one inbound message, one accepted send, or one refusal by `refused`. */
export function tally(store: AccountStore, what: { inbound: 1 } | { outbound: 1 } | { refused: string }): void {
  const t = totalsOf(store)
  if ('inbound' in what) store.put(KEY, { ...t, inbound: t.inbound + 1 })
  else if ('outbound' in what) store.put(KEY, { ...t, outbound: t.outbound + 1 })
  else store.put(KEY, { ...t, refused: { ...t.refused, [what.refused]: (t.refused[what.refused] ?? 0) + 1 } })
}
