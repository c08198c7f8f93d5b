/**
 * The SMS status answers (GET /channels/sms, GET /channels/sms/android-gateway, and the connect answers): the
 * account, which transport sends, each transport's state, read live from the provider when `live` is asked for.
 * Nothing secret is ever in them: the auth token, password and signing key stay in the sealed config.
 */
import type { z } from 'zod'
import type { AndroidTransportState, SmsStatus, TwilioTransportState } from '../../../schema/api/sms'
import type { AccountRow } from '../../db/accounts'
import type { Db } from '../../db/client'
import { lastMessageTimes } from '../../db/sms'
import { isoOrNull } from '../../lib/time'
import { refreshA2p } from './a2p'
import { isTollFree, maskSid, needsA2p, sendingTransport, writeSmsConfig, type AndroidTransport, type SmsConfig, type TwilioTransport } from './config'
import { listDevices } from './gateway-api'
import { findIncomingNumber } from './twilio-api'

/** A phone not seen by the gateway for this long is reported offline (the app pulls every 15 minutes by default). */
export const PHONE_OFFLINE_AFTER_MS = 30 * 60_000

function a2pView(number: string, t: TwilioTransport): z.infer<typeof TwilioTransportState>['a2p'] {
  const required = needsA2p(number)
  return {
    required,
    registered: t.a2p_registered,
    state: !required ? 'not_required' : t.a2p.confirmed ? 'confirmed' : 'unconfirmed',
    registration: !required ? null : isTollFree(number) ? 'toll_free_verification' : 'a2p_10dlc',
    messaging_service_sid: t.a2p.messaging_service_sid,
    campaign_status: t.a2p.campaign_status,
    checked_at: isoOrNull(t.a2p.checked_at),
  }
}

function twilioView(number: string, t: TwilioTransport, live: boolean, error: string | null): z.infer<typeof TwilioTransportState> {
  return {
    status: error ? 'error' : 'connected',
    account_sid: maskSid(t.account_sid),
    number_sid: t.number_sid,
    capabilities: t.capabilities,
    inbound_url: t.inbound_url,
    a2p: a2pView(number, t),
    error,
    live,
  }
}

export function androidView(a: AndroidTransport, live: boolean, error: string | null, now: number): z.infer<typeof AndroidTransportState> {
  const offline = a.last_seen === null || now - a.last_seen >= PHONE_OFFLINE_AFTER_MS
  return {
    status: error ? 'error' : offline ? 'offline' : 'connected',
    mode: a.mode,
    webhook_url: a.webhook_url,
    webhooks: a.webhook_ids,
    device_id: a.device_id,
    last_seen: isoOrNull(a.last_seen),
    error,
    live,
  }
}

/** Asks the providers (number capabilities, A2P, the phone's lastSeen) and stores what changed. */
export async function refreshLive(env: Env, db: Db, account: AccountRow, config: SmsConfig, now: number, parts = { twilio: true }) {
  const errors: { twilio: string | null; android: string | null } = { twilio: null, android: null }
  const next: SmsConfig = { twilio: config.twilio && { ...config.twilio }, android: config.android && { ...config.android } }
  if (next.twilio && parts.twilio) {
    const t = next.twilio
    try {
      const n = await findIncomingNumber(env, { accountSid: t.account_sid, authToken: t.auth_token }, account.id)
      if (!n) errors.twilio = 'the number is no longer on this Twilio account'
      else t.capabilities = { sms: n.capabilities?.sms === true, mms: n.capabilities?.mms === true }
    } catch (err) {
      errors.twilio = `Twilio could not be asked: ${err instanceof Error ? err.message : String(err)}`
    }
    if (needsA2p(account.id) && !errors.twilio) t.a2p = await refreshA2p(env, t, account.id, now)
  }
  if (next.android && next.android.mode === 'cloud') {
    const a = next.android
    try {
      const devices = await listDevices({ apiUrl: a.api_url, username: a.username, password: a.password })
      const device = devices.find((d) => d.id === a.device_id) ?? devices[0]
      const seen = device?.lastSeen ? Date.parse(device.lastSeen) : NaN
      if (Number.isFinite(seen)) a.last_seen = seen
    } catch (err) {
      errors.android = `the SMS gateway could not be asked: ${err instanceof Error ? err.message : String(err)}`
    }
  }
  await writeSmsConfig(env, db, account.tenantId, account.id, next, now)
  return { config: next, errors }
}

export async function smsStatus(
  db: Db,
  account: AccountRow,
  config: SmsConfig,
  live: { errors: { twilio: string | null; android: string | null } } | null,
  now: number
): Promise<z.infer<typeof SmsStatus>> {
  const times = await lastMessageTimes(db, account.tenantId, account.id)
  return {
    success: true,
    phone_number: account.id,
    account_id: account.id,
    status: account.status,
    sends_via: sendingTransport(config),
    twilio: config.twilio ? twilioView(account.id, config.twilio, live !== null, live?.errors.twilio ?? null) : null,
    android_gateway: config.android ? androidView(config.android, live !== null && config.android.mode === 'cloud', live?.errors.android ?? null, now) : null,
    connected_at: isoOrNull(account.connectedAt),
    last_inbound_at: isoOrNull(times.inbound),
    last_outbound_at: isoOrNull(times.outbound),
  }
}

export function notConnected(phone: string | null): z.infer<typeof SmsStatus> {
  return {
    success: true,
    phone_number: phone,
    account_id: null,
    status: 'not_connected',
    sends_via: null,
    twilio: null,
    android_gateway: null,
    connected_at: null,
    last_inbound_at: null,
    last_outbound_at: null,
  }
}
