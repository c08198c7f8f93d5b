/**
 * The +1 rule (spec 4.5): a US/Canada number sends through Twilio only once Twilio confirms its registration: an
 * A2P 10DLC campaign, or a toll-free verification for a toll-free number (twilio-api.ts findA2p says what confirms
 * it). The answer is stored with the transport and asked again: an unconfirmed number at most every
 * A2P_UNCONFIRMED_RECHECK_MS on the send path (GET /channels/sms always asks), a confirmed one every
 * A2P_CONFIRMED_TTL_MS, so a campaign or verification that lapses is noticed.
 */
import type { TwilioTransport } from './config'
import { findA2p, type TwilioCreds } from './twilio-api'

export const A2P_UNCONFIRMED_RECHECK_MS = 60_000
export const A2P_CONFIRMED_TTL_MS = 24 * 3_600_000

/** Whether the stored A2P answer must be refreshed before a send relies on it. */
export function a2pNeedsCheck(a2p: TwilioTransport['a2p'], now: number): boolean {
  if (a2p.checked_at === null) return true
  return now - a2p.checked_at >= (a2p.confirmed ? A2P_CONFIRMED_TTL_MS : A2P_UNCONFIRMED_RECHECK_MS)
}

/**
 * Asks Twilio. When Twilio cannot be asked, a confirmed number stays confirmed (a provider hiccup must not stop
 * sends) and an unconfirmed one stays unconfirmed; `checked_at` moves either way so the throttle holds.
 */
export async function refreshA2p(env: Env, t: TwilioTransport, number: string, now: number): Promise<TwilioTransport['a2p']> {
  const creds: TwilioCreds = { accountSid: t.account_sid, authToken: t.auth_token }
  try {
    const found = await findA2p(env, creds, number, t.number_sid)
    return { confirmed: found.confirmed, checked_at: now, messaging_service_sid: found.messagingServiceSid, campaign_status: found.campaignStatus }
  } catch {
    return { ...t.a2p, checked_at: now }
  }
}
