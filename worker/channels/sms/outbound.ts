/**
 * Sending an SMS: the send-time rules (a2p, media) and one delivery attempt. The phone sends when the number has
 * both transports (spec 4.5). Twilio: Messages.json with a per-message signed StatusCallback; error 21610 means the
 * person opted out at Twilio, so the contact is marked opted out. Phone: the gateway's /messages with our message id
 * as its idempotency id; a 503 (phone offline, queue full) is retried with backoff for up to SMS_RETRY_FOR_MS.
 */
import type { AccountContext, DeliveryResult } from '../../account/context'
import type { AccountRef } from '../../account/storage'
import type { MessageWithContact } from '../../db/messages'
import { setContactOptedOut } from '../../db/sms'
import { ApiError } from '../../errors'
import type { SendCheck } from '../contract'
import { a2pNeedsCheck, refreshA2p } from './a2p'
import { isTollFree, needsA2p, readSmsConfig, sendingTransport, writeSmsConfig, type AndroidTransport, type TwilioTransport } from './config'
import { enqueueSms, GatewayError } from './gateway-api'
import { createMessage, TwilioError } from './twilio-api'
import { twilioStatusUrl } from './urls'

/** How long a message waits for an offline phone (or a provider answering 429/5xx) before it fails (the channel's patience). */
export const SMS_RETRY_FOR_MS = 3_600_000
const RETRY_FIRST_MS = 30_000
const RETRY_MAX_MS = 10 * 60_000
/** Twilio: "Attempt to send to unsubscribed recipient". */
export const TWILIO_OPTED_OUT = 21610

/**
 * The wait before the next attempt, from how long the message has waited already: 30 s, then as long again (so the
 * gaps double), at most 10 minutes. Counted from the message's age because a deferred attempt is not counted.
 */
export function retryDelayMs(waitedMs: number): number {
  return Math.min(Math.max(RETRY_FIRST_MS, waitedMs), RETRY_MAX_MS)
}

export async function checkSmsSend(check: SendCheck): Promise<void> {
  const { env, db, account, now } = check
  const config = await readSmsConfig(env, db, account.tenantId, account.id)
  const via = config ? sendingTransport(config) : null
  // An account without a stored transport has nothing to check here; its delivery fails with the reason.
  if (!config || !via) return
  if (check.mediaUrl !== null) {
    if (via === 'android_gateway') {
      throw new ApiError(
        422,
        'media_not_supported',
        'This number sends through the Android phone, which sends SMS only (no media); send text, or remove the phone transport to use MMS through Twilio'
      )
    }
    if (!config.twilio!.capabilities.mms) {
      throw new ApiError(422, 'media_not_supported', `${account.id} has no MMS capability at Twilio; send text only`)
    }
  }
  if (via !== 'twilio' || !needsA2p(account.id)) return
  const t = config.twilio!
  let a2p = t.a2p
  if (a2pNeedsCheck(a2p, now)) {
    a2p = await refreshA2p(env, t, account.id, now)
    await writeSmsConfig(env, db, account.tenantId, account.id, { ...config, twilio: { ...t, a2p } }, now)
  }
  if (!a2p.confirmed) {
    throw new ApiError(
      409,
      'a2p_unconfirmed',
      isTollFree(account.id)
        ? `Twilio does not confirm the toll-free verification of ${account.id} yet: its status must be TWILIO_APPROVED${a2p.campaign_status ? ` (verification status: ${a2p.campaign_status})` : ' (no verification found)'}`
        : `Twilio does not confirm A2P registration for ${account.id} yet: the number must be in a Messaging Service whose US A2P campaign is VERIFIED${a2p.campaign_status ? ` (campaign status: ${a2p.campaign_status})` : ''}`
    )
  }
}

export async function deliverSms(c: AccountContext, ref: AccountRef, row: MessageWithContact): Promise<DeliveryResult> {
  const config = await readSmsConfig(c.env, c.db, ref.tenantId, ref.accountId)
  const to = row.contact?.phone
  if (!config || !sendingTransport(config)) return { ok: false, code: null, error: 'the SMS number has no transport connected' }
  if (!to) return { ok: false, code: null, error: 'the contact has no phone number' }
  if (config.android) return viaPhone(config.android, row, to)
  return viaTwilio(c, ref, config.twilio!, row, to)
}

async function viaPhone(a: AndroidTransport, row: MessageWithContact, to: string): Promise<DeliveryResult> {
  if (row.message.mediaUrl) return { ok: false, code: null, error: 'the Android phone sends SMS only; media cannot go out this way' }
  const now = Date.now()
  try {
    await enqueueSms({ apiUrl: a.api_url, username: a.username, password: a.password }, { id: row.message.id, to, text: row.message.text })
    return { ok: true, upstreamId: row.message.id }
  } catch (err) {
    const status = err instanceof GatewayError ? err.status : 0
    const detail = err instanceof Error ? err.message : String(err)
    if (status === 503 || status === 429 || status === 0 || status >= 500) {
      return { retry: true, at: now + retryDelayMs(now - row.message.createdAt), error: `the phone could not take the message: ${detail}` }
    }
    return { ok: false, code: status, error: `the SMS gateway refused the message: ${detail}` }
  }
}

async function viaTwilio(c: AccountContext, ref: AccountRef, t: TwilioTransport, row: MessageWithContact, to: string): Promise<DeliveryResult> {
  if (row.message.mediaUrl && !t.capabilities.mms) return { ok: false, code: null, error: 'the number has no MMS capability at Twilio' }
  const now = Date.now()
  try {
    const sent = await createMessage(
      c.env,
      { accountSid: t.account_sid, authToken: t.auth_token },
      {
        from: ref.accountId,
        to,
        body: row.message.text,
        mediaUrl: row.message.mediaUrl,
        statusCallback: await twilioStatusUrl(c.env, t.inbound_url, ref.tenantId, ref.accountId, row.message.id),
      }
    )
    return { ok: true, upstreamId: sent.sid }
  } catch (err) {
    if (!(err instanceof TwilioError)) throw err
    if (err.code === TWILIO_OPTED_OUT) {
      await setContactOptedOut(c.db, ref.tenantId, row.message.contactId, true, Date.now())
      return { ok: false, code: TWILIO_OPTED_OUT, error: 'the recipient opted out (replied STOP); Twilio refuses messages to them (error 21610)' }
    }
    if (err.status === 429 || err.status === 0 || err.status >= 500) {
      return { retry: true, at: now + retryDelayMs(now - row.message.createdAt), error: `Twilio did not take the message: ${err.message}` }
    }
    return { ok: false, code: err.code ?? err.status, error: `Twilio refused the message: ${err.message}` }
  }
}
