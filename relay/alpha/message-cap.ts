/**
 * alpha's cap on messages to new chats, as Baileys 7.0.0-rc14 hears it: the server's mex notification
 * `MessageCappingInfoNotification` becomes the event `message-capping.update` with its payload as sent
 * (`NewChatMessageCapInfo`: quota, usage, the cycle, `capping_status` NONE | FIRST_WARNING | SECOND_WARNING | CAPPED;
 * Socket/messages-recv.js handleMessageCappingNotification). Read here as the ban-risk signal `new_chat_cap` (issue
 * 25), reported like the reach-out time lock: in force from the first warning to the end of the cycle, lifted by NONE.
 */
import type { NewChatMessageCapInfo } from '@whiskeysockets/baileys'
import type { RiskReport } from '../connector'

/** The statuses that mean the number is near or at its cap. */
const NEAR_CAP = new Set(['FIRST_WARNING', 'SECOND_WARNING', 'CAPPED'])

/** A Baileys timestamp: Unix seconds as a string ("0" or absent: none), as `time_enforcement_ends` is. */
function epochMs(seconds: string | undefined): number | null {
  const n = seconds === undefined ? Number.NaN : Number.parseInt(seconds, 10)
  return Number.isFinite(n) && n > 0 ? n * 1000 : null
}

/**
 * The signal one update reports, or null when it says nothing either way. Without a status, a used-up quota counts
 * as capped and a quota with room left as lifted.
 */
export function newChatCapRisk(info: NewChatMessageCapInfo, now: number): RiskReport | null {
  const used = info.used_quota
  const total = info.total_quota
  const quota = used !== undefined && total !== undefined ? ` (${used} of ${total} new-chat messages this cycle)` : ''
  const status = info.capping_status ?? (used !== undefined && total !== undefined ? (used >= total ? 'CAPPED' : 'NONE') : undefined)
  if (status === undefined) return null
  if (!NEAR_CAP.has(status)) return { signal: 'new_chat_cap', active: false, until: null, detail: `alpha lifted its cap on messages to new chats${quota}.` }
  const end = epochMs(info.cycle_end_timestamp)
  const until = end !== null && end > now ? end : null
  const what = status === 'CAPPED' ? 'reached its cap on messages to new chats' : 'is near its cap on messages to new chats'
  return { signal: 'new_chat_cap', active: true, until, detail: `alpha says this number ${what}${quota}: write to new people less until the cycle ends.` }
}
