/**
 * Ban-risk signals (issue 25): what a network or provider told the account about being near or at one of its limits
 * (schema/frames.ts RISK_SIGNALS), kept in the AccountDO's storage while in force. A signal that starts (or starts
 * again after it ended) writes `account.at_risk`; while any is in force the send guards take no new contacts
 * (guards.ts `account_at_risk`) and GET /accounts and GET /usage show it. Plain functions of the stored list and a
 * clock; `recordRisk` is the one writer.
 */
import { z } from 'zod'
import type { AccountRisk } from '../../schema/api/accounts'
import { RISK_SIGNALS, type RiskSignalName } from '../../schema/frames'
import { getAccount } from '../db/accounts'
import { insertEvent } from '../db/events'
import { riskEventPayload } from '../events/payloads'
import { RISK_ADVICE } from '../events/risk-advice'
import { iso } from '../lib/time'
import type { AccountContext } from './context'
import type { AccountRef } from './storage'

const RISK_KEY = 'risk'

const RiskEntry = z.object({ signal: z.enum(RISK_SIGNALS), since: z.number(), until: z.number().nullable(), detail: z.string() })
export type RiskEntry = z.infer<typeof RiskEntry>
const RiskList = z.array(RiskEntry)

/** A report of one signal: `active` false lifts it. */
export type RiskReport = { signal: RiskSignalName; active: boolean; until: number | null; detail: string }

/** How long a signal the network gives no end for stays in force after its last report (null: until lifted). */
export const RISK_HOLD_MS: Record<RiskSignalName, number | null> = {
  reachout_timelock: null,
  new_chat_refused: 24 * 3_600_000,
  new_chat_cap: null,
  flood_wait: null,
  spam_flag: null,
  carrier_filtering: 24 * 3_600_000,
  policy_block: 24 * 3_600_000,
}

const inForce = (e: RiskEntry, now: number) => e.until === null || e.until > now

/**
 * Whether a signal pauses new contacts. A flood wait does not: it is the network's throttle, which the relay already
 * honours by holding every send until the wait ends and then sending them once each, in order, so a send accepted
 * meanwhile is delayed, not refused. It is still reported (`account.at_risk`, `risk`) so an agent can slow down.
 */
export const PAUSES_NEW_CONTACTS: Record<RiskSignalName, boolean> = {
  reachout_timelock: true,
  new_chat_refused: true,
  new_chat_cap: true,
  flood_wait: false,
  spam_flag: true,
  carrier_filtering: true,
  policy_block: true,
}

/** The signals in force at `now`. */
export function activeSignals(list: RiskEntry[], now: number): RiskEntry[] {
  return list.filter((e) => inForce(e, now))
}

/**
 * The list after one report, and the entry whose start it is (null when the signal was already in force, or lifted).
 * Ended entries are dropped; a report without an end takes the signal's hold.
 */
export function applyRisk(list: RiskEntry[], r: RiskReport, now: number): { next: RiskEntry[]; started: RiskEntry | null } {
  const current = activeSignals(list, now)
  const before = current.find((e) => e.signal === r.signal)
  const others = current.filter((e) => e.signal !== r.signal)
  if (!r.active) return { next: others, started: null }
  const hold = RISK_HOLD_MS[r.signal]
  const until = r.until ?? (hold === null ? null : now + hold)
  if (until !== null && until <= now) return { next: others, started: null }
  const entry: RiskEntry = { signal: r.signal, since: before?.since ?? now, until, detail: r.detail }
  return { next: [...others, entry], started: before ? null : entry }
}

/** The signal that decides the guards: of those that pause new contacts, the one that lasts longest (an open-ended one first), or null. */
export function governingRisk(list: RiskEntry[], now: number): { signal: string; until: number | null } | null {
  const active = activeSignals(list, now).filter((e) => PAUSES_NEW_CONTACTS[e.signal])
  if (active.length === 0) return null
  const open = active.find((e) => e.until === null)
  const last = open ?? active.reduce((a, b) => ((a.until ?? 0) >= (b.until ?? 0) ? a : b))
  return { signal: last.signal, until: last.until }
}

export function riskView(list: RiskEntry[], now: number): z.infer<typeof AccountRisk> {
  const signals = activeSignals(list, now).map((e) => ({
    signal: e.signal,
    since: iso(e.since),
    until: e.until === null ? null : iso(e.until),
    advice: RISK_ADVICE[e.signal],
  }))
  return { at_risk: signals.length > 0, signals }
}

export function storedRisk(c: Pick<AccountContext, 'store'>): RiskEntry[] {
  return c.store.get(RISK_KEY, RiskList) ?? []
}

/** Applies a report: stored at once (the guards see it on the next send), and `account.at_risk` when it starts. */
export async function recordRisk(c: AccountContext, ref: AccountRef, report: RiskReport, now: number): Promise<void> {
  c.store.setRef(ref)
  const { next, started } = applyRisk(storedRisk(c), report, now)
  c.store.put(RISK_KEY, next)
  if (!started) return
  const account = await getAccount(c.db, ref.tenantId, ref.accountId)
  if (!account) return
  const payload = riskEventPayload(account, { signal: started.signal, until: started.until }, now)
  await c.commit([insertEvent(c.db, ref.tenantId, ref.accountId, payload, now)])
}
