/**
 * Connecting a transport (spec 4.5). Twilio: the credentials are checked, the number is found on that account with
 * SMS capability, a +1 number needs `a2p_registered`, and the number's incoming-SMS URL is pointed at this number's
 * inbound URL. Android: the credentials are checked, a fresh signing key is set on the phone, and one webhook per
 * event is registered with stable ids. Upstream first, then the account: a refusal stores nothing.
 */
import type { z } from 'zod'
import type { ConnectAndroidSmsBody, ConnectSmsBody } from '../../../schema/api/sms'
import { smsGatewayUrl, urlPolicy } from '../../config'
import type { Db } from '../../db/client'
import type { Tenant } from '../../db/tenants'
import { ApiError } from '../../errors'
import { randomBase62, sha256Hex } from '../../lib/crypto'
import { checkPublicUrl } from '../../../common/public-url'
import { ensureSmsAccount, saveSmsConfig, undoAdded } from './account'
import { refreshA2p } from './a2p'
import { needsA2p, readSmsConfig, type AndroidTransport, type TwilioTransport } from './config'
import { GATEWAY_EVENTS, GatewayError, listDevices, localInfo, registerWebhook, setSigningKey, type GatewayCreds, type GatewayDevice } from './gateway-api'
import { fetchAccount, findIncomingNumber, type IncomingNumber, setSmsUrl, TwilioError, type TwilioCreds } from './twilio-api'
import { gatewayWebhookUrl, twilioInboundUrl } from './urls'

export type ConnectCtx = { env: Env; db: Db; tenant: Tenant; requestUrl: string; now: number }

/** A provider failure as the answer the caller sees: their mistake is 4xx, the provider's trouble 502 (logged). */
function providerFailure(provider: string, err: unknown): ApiError {
  const status = err instanceof TwilioError || err instanceof GatewayError ? err.status : 0
  if (status === 401 || status === 403) {
    return new ApiError(400, 'invalid_provider_credentials', `${provider} refused these credentials`)
  }
  console.error(JSON.stringify({ msg: 'sms provider call failed', provider, status, error: err instanceof Error ? err.message : String(err) }))
  return new ApiError(502, 'provider_unavailable', `${provider} could not be reached or answered an error (HTTP ${status || 'none'}); try again`)
}

export async function connectTwilio(ctx: ConnectCtx, body: z.infer<typeof ConnectSmsBody>) {
  const number = body.phone_number
  if (needsA2p(number) && !body.a2p_registered) {
    throw new ApiError(
      409,
      'a2p_unconfirmed',
      // Channel-connection errors carry the HTTP status as error_code (spec part 7), so the message names the code.
      'a2p_unconfirmed: a +1 (US/Canada) number needs carrier registration (A2P 10DLC, or toll-free verification for a toll-free number): register it in the Twilio console, then connect with a2p_registered: true'
    )
  }
  const creds: TwilioCreds = { accountSid: body.account_sid, authToken: body.auth_token }
  let found: IncomingNumber | null
  try {
    const account = await fetchAccount(ctx.env, creds)
    if (account.status !== 'active') throw new ApiError(422, 'provider_account_inactive', `The Twilio account is ${account.status}`)
    found = await findIncomingNumber(ctx.env, creds, number)
  } catch (err) {
    throw err instanceof ApiError ? err : providerFailure('Twilio', err)
  }
  if (!found) throw new ApiError(404, 'number_not_found', `${number} is not a number of this Twilio account`)
  if (!found.capabilities?.sms) throw new ApiError(422, 'number_not_sms_capable', `${number} has no SMS capability at Twilio`)

  const { account, created } = await ensureSmsAccount(ctx.db, ctx.tenant, number, ctx.now)
  const inboundUrl = twilioInboundUrl(ctx.env, ctx.requestUrl, ctx.tenant.id, number)
  try {
    await setSmsUrl(ctx.env, creds, found.sid, inboundUrl)
  } catch (err) {
    if (created) await undoAdded(ctx.db, account)
    throw providerFailure('Twilio', err)
  }
  const transport: TwilioTransport = {
    account_sid: body.account_sid,
    auth_token: body.auth_token,
    number_sid: found.sid,
    capabilities: { sms: true, mms: found.capabilities?.mms === true },
    inbound_url: inboundUrl,
    a2p_registered: body.a2p_registered,
    a2p: { confirmed: false, checked_at: null, messaging_service_sid: null, campaign_status: null },
    connected_at: ctx.now,
  }
  if (needsA2p(number)) transport.a2p = await refreshA2p(ctx.env, transport, number, ctx.now)
  const previous = created ? undefined : await readSmsConfig(ctx.env, ctx.db, ctx.tenant.id, number)
  return saveSmsConfig(ctx.env, ctx.db, account, created, { twilio: transport, android: previous?.android ?? null }, ctx.now)
}

/** Stable webhook ids per tenant and number: a reconnect replaces the same webhooks instead of adding more. */
async function webhookId(tenantId: string, number: string, event: string): Promise<string> {
  return `mg-${(await sha256Hex(`${tenantId}\u0000${number}`)).slice(0, 16)}-${event.replace(':', '-')}`
}

/** The phone that sends: the most recently seen device of the gateway account. */
function pickDevice(devices: GatewayDevice[]): GatewayDevice | null {
  const seen = (d: GatewayDevice) => (d.lastSeen ? Date.parse(d.lastSeen) || 0 : 0)
  return [...devices].sort((a, b) => seen(b) - seen(a))[0] ?? null
}

export async function connectAndroid(ctx: ConnectCtx, body: z.infer<typeof ConnectAndroidSmsBody>) {
  const number = body.phone_number
  let apiUrl = smsGatewayUrl(ctx.env)
  if (body.mode === 'local') {
    if (!body.base_url) throw new ApiError(400, 'invalid_request', 'base_url is required with mode local: the public https URL that reaches the phone')
    const check = checkPublicUrl(body.base_url, urlPolicy(ctx.env, ctx.requestUrl))
    if (!check.ok) throw new ApiError(400, 'invalid_base_url', `base_url is not allowed: ${check.reason}`)
    apiUrl = check.url.toString().replace(/\/+$/, '')
  } else if (body.base_url !== undefined) {
    throw new ApiError(400, 'invalid_request', 'base_url is only used with mode local')
  }
  const creds: GatewayCreds = { apiUrl, username: body.username, password: body.password }
  const webhookUrl = gatewayWebhookUrl(ctx.env, ctx.requestUrl, ctx.tenant.id, number)
  const signingKey = randomBase62(40)
  let device: GatewayDevice | null = null
  try {
    if (body.mode === 'cloud') {
      device = pickDevice(await listDevices(creds))
      if (!device) throw new ApiError(422, 'no_device', 'No phone is registered with this gateway account; open the app and start the cloud server first')
    } else {
      await localInfo(creds)
    }
  } catch (err) {
    throw err instanceof ApiError ? err : providerFailure('The SMS gateway', err)
  }

  const { account, created } = await ensureSmsAccount(ctx.db, ctx.tenant, number, ctx.now)
  const hooks: AndroidTransport['webhook_ids'] = []
  try {
    await setSigningKey(creds, signingKey)
    for (const event of GATEWAY_EVENTS) {
      const id = await webhookId(ctx.tenant.id, number, event)
      await registerWebhook(creds, { id, url: webhookUrl, event })
      hooks.push({ id, event })
    }
  } catch (err) {
    if (created) await undoAdded(ctx.db, account)
    throw providerFailure('The SMS gateway', err)
  }
  const transport: AndroidTransport = {
    mode: body.mode,
    api_url: apiUrl,
    username: body.username,
    password: body.password,
    signing_key: signingKey,
    webhook_url: webhookUrl,
    webhook_ids: hooks,
    device_id: device?.id ?? null,
    last_seen: device?.lastSeen ? Date.parse(device.lastSeen) || null : body.mode === 'local' ? ctx.now : null,
    connected_at: ctx.now,
  }
  const previous = created ? undefined : await readSmsConfig(ctx.env, ctx.db, ctx.tenant.id, number)
  return saveSmsConfig(ctx.env, ctx.db, account, created, { twilio: previous?.twilio ?? null, android: transport }, ctx.now)
}
