/**
 * The SMS account's stored settings: one sealed channel_connections row per number (kind `sms`) holding up to two
 * transports, Twilio and an Android phone running SMS Gateway for Android. Secrets (auth token, gateway password,
 * signing key) live only here, sealed (lib/sealed.ts) and bound to their account's row.
 */
import { z } from 'zod'
import { keyring } from '../../config'
import { readConnectionConfig, sealConnectionConfig, upsertConnectionConfig } from '../../db/channel-connections'
import type { Db } from '../../db/client'

export const SMS_KIND = 'sms'

export const TwilioTransport = z.object({
  account_sid: z.string(),
  auth_token: z.string(),
  number_sid: z.string(),
  capabilities: z.object({ sms: z.boolean(), mms: z.boolean() }),
  inbound_url: z.string(),
  a2p_registered: z.boolean(),
  a2p: z.object({
    confirmed: z.boolean(),
    checked_at: z.number().nullable(),
    messaging_service_sid: z.string().nullable(),
    campaign_status: z.string().nullable(),
  }),
  connected_at: z.number(),
})
export type TwilioTransport = z.infer<typeof TwilioTransport>

export const AndroidTransport = z.object({
  mode: z.enum(['cloud', 'local']),
  /** The API root requests go to: `<cloud>/3rdparty/v1`, or the phone's local server URL. */
  api_url: z.string(),
  username: z.string(),
  password: z.string(),
  signing_key: z.string(),
  webhook_url: z.string(),
  webhook_ids: z.array(z.object({ id: z.string(), event: z.string() })),
  device_id: z.string().nullable(),
  last_seen: z.number().nullable(),
  connected_at: z.number(),
})
export type AndroidTransport = z.infer<typeof AndroidTransport>

export const SmsConfig = z.object({ twilio: TwilioTransport.nullable(), android: AndroidTransport.nullable() })
export type SmsConfig = z.infer<typeof SmsConfig>

export type Transport = 'twilio' | 'android_gateway'

/** Spec 4.5: when both transports exist, sends go out from the phone. */
export function sendingTransport(config: SmsConfig): Transport | null {
  if (config.android) return 'android_gateway'
  if (config.twilio) return 'twilio'
  return null
}

export function transportsOf(config: SmsConfig): Transport[] {
  return [...(config.twilio ? (['twilio'] as const) : []), ...(config.android ? (['android_gateway'] as const) : [])]
}

export function readSmsConfig(env: Env, db: Db, tenantId: string, accountId: string): Promise<SmsConfig | undefined> {
  return readConnectionConfig(db, keyring(env), tenantId, accountId, SmsConfig)
}

/** Seals a config (kept apart from the statement: a query builder is a thenable and must not come out of a Promise). */
export function sealSmsConfig(env: Env, tenantId: string, accountId: string, config: SmsConfig): Promise<string> {
  return sealConnectionConfig(keyring(env), tenantId, accountId, config)
}

/** A statement (for a D1 batch) storing an already sealed config. */
export function smsConfigStatement(db: Db, tenantId: string, accountId: string, sealed: string, now: number) {
  return upsertConnectionConfig(db, tenantId, accountId, SMS_KIND, sealed, now)
}

/** Stores the config now (outside a batch). */
export async function writeSmsConfig(env: Env, db: Db, tenantId: string, accountId: string, config: SmsConfig, now: number): Promise<void> {
  await smsConfigStatement(db, tenantId, accountId, await sealSmsConfig(env, tenantId, accountId, config), now)
}

/** `AC12…cdef`: enough to recognise the account, nothing to reuse. */
export function maskSid(sid: string): string {
  return sid.length <= 8 ? '****' : `${sid.slice(0, 4)}…${sid.slice(-4)}`
}

/** The number without its `+`, as it appears in the per-connection callback paths. */
export function numberSegment(e164: string): string {
  return e164.replace(/^\+/, '')
}

export function numberFromSegment(segment: string): string | null {
  return /^[1-9]\d{6,14}$/.test(segment) ? `+${segment}` : null
}

/** A +1 number (US/Canada) falls under the A2P 10DLC rule (spec 4.5). */
export function needsA2p(e164: string): boolean {
  return e164.startsWith('+1')
}

/** The NANP toll-free area codes in service: carriers want such a number verified as toll-free, not in a 10DLC campaign. */
const TOLL_FREE = /^\+1(800|833|844|855|866|877|888)\d{7}$/

/** A +1 toll-free number: its registration is Twilio's toll-free verification instead of an A2P 10DLC campaign. */
export function isTollFree(e164: string): boolean {
  return TOLL_FREE.test(e164)
}
