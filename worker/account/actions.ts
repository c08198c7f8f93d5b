/**
 * Chat actions inside the AccountDO (issue 25): reactions, typing, read marks and on-network lookups. Each counts
 * against an exact per-account limit kept here (a sliding minute, like the send guards: the object decides with no
 * await between the check and the count), never against the daily send caps. Lookups have their own, lower budget
 * (looking numbers up in bulk is itself a ban signal on alpha) and a 24-hour cache that costs nothing. The channel
 * carries the action out: the account's relay session (alpha, beta) or the channel's `act` (a direct channel).
 */
import { z } from 'zod'
import type { AccountContext, ActionResult, ChannelAction } from './context'
import { applyReaction, OWN_REACTION } from './reactions'
import { relayAct } from './session/actions'
import type { AccountRef } from './storage'
import type { MessageWithContact } from '../db/messages'

/** Reactions, typing and read marks per account per minute. */
export const ACTIONS_PER_MINUTE = 60
/** Lookups that reach the network, per account per minute (cached answers are free). */
export const LOOKUPS_PER_MINUTE = 60
/** How long a lookup's answer is reused. */
export const LOOKUP_CACHE_MS = 24 * 3_600_000
/** At most this many numbers are cached per account; the oldest answer goes first. */
export const LOOKUP_CACHE_MAX = 1_000
const WINDOW_MS = 60_000

const WINDOW_KEY = { actions: 'action_window', lookups: 'lookup_window' } as const
const LOOKUP_CACHE_KEY = 'lookup_cache'
const Times = z.array(z.number())
const Cached = z.record(z.string(), z.object({ onNetwork: z.boolean(), at: z.number() }))

export type LookupAnswer = { onNetwork: boolean | null; reason: string | null; cached: boolean; checkedAt: number }
export type ActOutcome = (ActionResult & { ok: false }) | { ok: true; at: number; lookup?: LookupAnswer }

/**
 * Counts one use of `budget` now, or refuses with `rate_limited` and the seconds until the oldest use leaves the
 * minute. Read, checked and written with no await in between.
 */
function spend(c: AccountContext, budget: keyof typeof WINDOW_KEY, now: number): (ActionResult & { ok: false }) | null {
  const limit = budget === 'actions' ? ACTIONS_PER_MINUTE : LOOKUPS_PER_MINUTE
  const recent = (c.store.get(WINDOW_KEY[budget], Times) ?? []).filter((t) => t > now - WINDOW_MS)
  if (recent.length >= limit) {
    const retryAfterS = Math.max(1, Math.ceil((recent[0]! + WINDOW_MS - now) / 1000))
    const what = budget === 'actions' ? 'reactions, typing and read marks' : 'lookups'
    return { ok: false, status: 429, code: 'rate_limited', message: `This account may make ${limit} ${what} a minute; wait ${retryAfterS} s`, retryAfterS }
  }
  c.store.put(WINDOW_KEY[budget], [...recent, now])
  return null
}

function cachedLookup(c: AccountContext, phone: string, now: number): LookupAnswer | null {
  const hit = c.store.get(LOOKUP_CACHE_KEY, Cached)?.[phone]
  return hit && hit.at > now - LOOKUP_CACHE_MS ? { onNetwork: hit.onNetwork, reason: null, cached: true, checkedAt: hit.at } : null
}

function cacheLookup(c: AccountContext, phone: string, onNetwork: boolean, now: number): void {
  const fresh = Object.entries(c.store.get(LOOKUP_CACHE_KEY, Cached) ?? {}).filter(([p, e]) => p !== phone && e.at > now - LOOKUP_CACHE_MS)
  const kept = fresh.sort((a, b) => b[1].at - a[1].at).slice(0, LOOKUP_CACHE_MAX - 1)
  c.store.put(LOOKUP_CACHE_KEY, Object.fromEntries([[phone, { onNetwork, at: now }], ...kept]))
}

/** Hands the action to the account's channel: its relay session, or the direct channel's own `act`. */
function carryOut(c: AccountContext, ref: AccountRef, action: ChannelAction): Promise<ActionResult> {
  const channel = c.channels(ref.channel)
  if (channel.transport === 'relay') return relayAct(c, action)
  if (channel.act) return channel.act(c, ref, action)
  return Promise.resolve({ ok: false, status: 422, code: 'unsupported_on_channel', message: `The ${ref.channel} channel cannot do this` })
}

/**
 * One chat action for the account. `row` is the message a reaction names (the account's own reaction is stored on
 * it once the network took it).
 */
export async function act(c: AccountContext, ref: AccountRef, action: ChannelAction, row: MessageWithContact | null): Promise<ActOutcome> {
  const now = Date.now()
  c.store.setRef(ref)
  if (action.kind === 'lookup') {
    const cached = cachedLookup(c, action.phone, now)
    if (cached) return { ok: true, at: now, lookup: cached }
  }
  const refused = spend(c, action.kind === 'lookup' ? 'lookups' : 'actions', now)
  if (refused) return refused
  const result = await carryOut(c, ref, action)
  if (!result.ok) return result
  const at = Date.now()
  if (action.kind === 'react' && row) await applyReaction(c, ref, row, { from: OWN_REACTION, emoji: action.emoji, at }, false)
  if (action.kind !== 'lookup') return { ok: true, at }
  const onNetwork = result.onNetwork ?? null
  if (onNetwork !== null) cacheLookup(c, action.phone, onNetwork, at)
  return { ok: true, at, lookup: { onNetwork, reason: result.reason ?? null, cached: false, checkedAt: at } }
}
