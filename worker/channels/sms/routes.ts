/**
 * /v1/channels/sms (spec 4.5), API-key routes: connect a Twilio number or an Android phone, read the number's
 * state (both transports) or the phone's alone, and disconnect one transport or the number. The provider callbacks
 * are public routes (callbacks.ts).
 */
import { createRoute } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { IdempotencyKeyHeader } from '../../../schema/api/common'
import {
  AndroidSmsConnected,
  AndroidSmsStatus,
  ConnectAndroidSmsBody,
  ConnectSmsBody,
  DisconnectSmsQuery,
  SmsQuery,
  SmsRemoved,
  SmsStatus,
} from '../../../schema/api/sms'
import { listAccounts, type AccountRow } from '../../db/accounts'
import type { Db } from '../../db/client'
import type { AppEnv } from '../../env'
import { ApiError } from '../../errors'
import { checkAccount } from '../../safety/key-refusals'
import type { KeyGrant } from '../../safety/grant'
import { statusErrors } from '../../lib/openapi-responses'
import { resourceApp } from '../../validate'
import { GATEWAY_EVENTS } from './gateway-api'
import { removeSmsAccount } from './account'
import { readSmsConfig, transportsOf, writeSmsConfig, type SmsConfig, type Transport } from './config'
import { connectAndroid, connectTwilio, type ConnectCtx } from './connect'
import { androidView, notConnected, refreshLive, smsStatus } from './report'
import { clearAndroid, clearTwilio } from './teardown'

export const smsRoutes = resourceApp()

const TAGS = ['SMS channel']
const json = <T>(schema: T, description: string) => ({ description, content: { 'application/json': { schema } } })

/**
 * The SMS account a status or disconnect call means: the one named, or the only one. A key limited to some accounts
 * is held to the number it resolves to (the middleware has checked a named one already).
 */
async function pickAccount(db: Db, grant: KeyGrant, tenantId: string, phone: string | undefined): Promise<AccountRow | null> {
  const sms = (await listAccounts(db, tenantId)).filter((a) => a.channel === 'sms')
  if (phone !== undefined) return sms.find((a) => a.id === phone) ?? null
  if (sms.length > 1) {
    throw new ApiError(400, 'ambiguous_account', `Several SMS numbers are connected (${sms.map((a) => a.id).join(', ')}); name one in phone_number`)
  }
  checkAccount(grant, sms[0]?.id)
  return sms[0] ?? null
}

/** The SMS account a status or disconnect call means (pickAccount) with the settings stored for it. */
async function picked(c: Context<AppEnv>, phone: string | undefined) {
  const db = c.var.db
  const now = Date.now()
  const account = await pickAccount(db, c.get('key'), c.get('tenant').id, phone)
  const config = account ? await readSmsConfig(c.env, db, account.tenantId, account.id) : undefined
  return { db, now, account, config }
}

/** Runs one transport's connect, then answers the number as connected with the settings now stored for it. */
async function connected(c: Context<AppEnv>, connect: (ctx: ConnectCtx) => Promise<AccountRow>) {
  const db = c.var.db
  const now = Date.now()
  const account = await connect({ env: c.env, db, tenant: c.get('tenant'), requestUrl: c.req.url, now })
  const config = (await readSmsConfig(c.env, db, account.tenantId, account.id))!
  return { config, status: await smsStatus(db, { ...account, status: 'connected' }, config, null, now) }
}

smsRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/twilio',
    operationId: 'connect_sms',
    tags: TAGS,
    summary: 'Connect an SMS number',
    description: [
      "Connects the user's own Twilio number (account SID and auth token) and points the number's incoming-SMS webhook at the service. A +1 (US/Canada) number needs a2p_registered true, after carrier registration.",
      [
        'Checks the account SID and auth token with Twilio, finds `phone_number` on that account (it needs SMS capability),',
        "and points the number's incoming-SMS webhook (SmsUrl, POST) at this number's inbound URL, replacing what was there.",
        'A +1 number needs `a2p_registered: true` (else 409 `a2p_unconfirmed`); sends from it answer 409 `a2p_unconfirmed`',
        'until Twilio lists the number in a Messaging Service with a VERIFIED US A2P campaign. The auth token is stored',
        'sealed and never returned. The number becomes (or stays) one `sms` account, counted once against the plan cap.',
        'Inbound MMS attachments are fetched from Twilio into the media store after Twilio is answered: one message per',
        'attachment, the text on the first, `media.too_large` over the cap, `media.unavailable` when Twilio does not serve it.',
      ].join(' '),
    ].join('\n\n'),
    request: { headers: IdempotencyKeyHeader, body: { required: true, content: { 'application/json': { schema: ConnectSmsBody } } } },
    responses: {
      200: json(SmsStatus, 'The number, connected'),
      ...statusErrors([400, 401, 404, 409, 422, 502], {
        400: 'Invalid body, or Twilio refused the credentials (invalid_provider_credentials)',
        404: 'The number is not on this Twilio account',
        409: 'a2p_unconfirmed (+1 without a2p_registered), account_exists (the number is on another channel), account_cap_reached',
        422: 'The number has no SMS capability, or the Twilio account is not active',
        502: 'Twilio could not be reached',
      }),
    },
  }),
  async (c) => {
    const { status } = await connected(c, (ctx) => connectTwilio(ctx, c.req.valid('json')))
    return c.json(status, 200)
  }
)

smsRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/android-gateway',
    operationId: 'connect_android_sms',
    tags: TAGS,
    summary: 'Connect an Android SMS gateway',
    description: [
      "Connects an Android phone running the SMS Gateway app (cloud or local mode) so SMS go out from the user's own SIM; registers the webhooks for incoming SMS and delivery reports. When both SMS connections exist, sends use the phone (text only, no media).",
      [
        'Checks the credentials with the gateway (cloud: the gateway’s cloud API; local: `base_url`, a public https URL',
        'reaching the phone), sets a fresh webhook signing key on the phone, and registers one webhook per event',
        `(${GATEWAY_EVENTS.join(', ')}) at \`webhook_url\`. When the number also has Twilio, sends go`,
        'out from the phone and inbound from either lands on the same account. The phone sends text only (no media).',
        'The password is stored sealed and never returned.',
      ].join(' '),
    ].join('\n\n'),
    request: { headers: IdempotencyKeyHeader, body: { required: true, content: { 'application/json': { schema: ConnectAndroidSmsBody } } } },
    responses: {
      200: json(AndroidSmsConnected, 'The number, connected, with the webhook URL registered on the gateway'),
      ...statusErrors([400, 401, 409, 422, 502], {
        400: 'Invalid body or base_url, or the gateway refused the credentials (invalid_provider_credentials)',
        409: 'account_exists (the number is on another channel), account_cap_reached',
        422: 'No phone is registered with the gateway account',
        502: 'The gateway could not be reached',
      }),
    },
  }),
  async (c) => {
    const { status, config } = await connected(c, (ctx) => connectAndroid(ctx, c.req.valid('json')))
    return c.json({ ...status, webhook_url: config.android!.webhook_url }, 200)
  }
)

smsRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/',
    operationId: 'get_sms_status',
    tags: TAGS,
    summary: 'Get the SMS connection',
    description: [
      'Reports the SMS number: which transport sends, the Twilio number (capabilities, A2P state, asked again on every call) and the phone (last seen), last inbound and outbound times. phone_number is needed only when several SMS numbers are connected.',
      [
        'The number’s account status, which transport sends (`sends_via`), and per transport: Twilio (masked account SID,',
        'number capabilities, inbound URL, A2P state) and the phone (last seen). Read live from the providers; the A2P',
        'state is asked again on every call. Last inbound and outbound message times. `status: not_connected` when the',
        'number (or, without phone_number, any SMS number) is not connected.',
      ].join(' '),
    ].join('\n\n'),
    request: { query: SmsQuery },
    responses: { 200: json(SmsStatus, 'The state'), ...statusErrors([400, 401]) },
  }),
  async (c) => {
    const { phone_number } = c.req.valid('query')
    const { db, now, account, config } = await picked(c, phone_number)
    if (!account || !config) return c.json(notConnected(phone_number ?? null), 200)
    const live = await refreshLive(c.env, db, account, config, now)
    return c.json(await smsStatus(db, account, live.config, live, now), 200)
  }
)

smsRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/android-gateway',
    operationId: 'get_android_sms_status',
    tags: TAGS,
    summary: 'Get the Android SMS gateway connection',
    description: [
      'Reports the Android phone transport, including when the phone was last seen (offline after 30 minutes unseen).',
      'The phone transport of the number: mode, registered webhooks, and when the phone was last seen (cloud: asked live from the gateway; local: the last webhook or connect). `offline` when not seen for 30 minutes.',
    ].join('\n\n'),
    request: { query: SmsQuery },
    responses: { 200: json(AndroidSmsStatus, 'The phone’s state'), ...statusErrors([400, 401]) },
  }),
  async (c) => {
    const { phone_number } = c.req.valid('query')
    const { db, now, account, config } = await picked(c, phone_number)
    if (!account || !config?.android) {
      return c.json({ success: true as const, phone_number: account?.id ?? phone_number ?? null, status: 'not_connected' as const, android_gateway: null }, 200)
    }
    const live = await refreshLive(c.env, db, account, config, now, { twilio: false })
    const view = androidView(live.config.android!, config.android.mode === 'cloud', live.errors.android, now)
    return c.json({ success: true as const, phone_number: account.id, status: view.status, android_gateway: view }, 200)
  }
)

smsRoutes.openapi(
  createRoute({
    method: 'delete',
    path: '/',
    operationId: 'disconnect_sms',
    tags: TAGS,
    summary: 'Disconnect SMS',
    description: [
      'Clears the webhooks the service set up and removes the SMS transport(s) (transport: twilio, android_gateway, or all by default); the number leaves the service with its last transport and stays with the provider. Ask the user first; idempotent.',
      [
        'Clears what connect set up at the providers (Twilio: the number’s incoming-SMS URL; the phone: its webhooks) and',
        'removes the transport(s) named by `transport` (default all). When no transport remains the number leaves the',
        'service: its account is removed, queued messages fail, `account.disconnected` fires; message history stays. The',
        'number stays with the provider. Removal succeeds even when a provider cannot be reached (`upstream_cleared: false`).',
        'Idempotent.',
      ].join(' '),
    ].join('\n\n'),
    request: { query: DisconnectSmsQuery },
    responses: { 200: json(SmsRemoved, 'Removed (or nothing to remove)'), ...statusErrors([400, 401]) },
  }),
  async (c) => {
    const { phone_number, transport } = c.req.valid('query')
    const { db, now, account, config } = await picked(c, phone_number)
    const nothing = { success: true as const, phone_number: account?.id ?? phone_number ?? null, removed: [], upstream_cleared: true }
    if (!account) return c.json({ ...nothing, status: 'not_connected' as const, remaining: [] }, 200)
    const current = config ?? { twilio: null, android: null }
    const removed: Transport[] = []
    let cleared = true
    const next: SmsConfig = { ...current }
    if (current.twilio && (transport === 'all' || transport === 'twilio')) {
      cleared = (await clearTwilio(c.env, current.twilio)) && cleared
      next.twilio = null
      removed.push('twilio')
    }
    if (current.android && (transport === 'all' || transport === 'android_gateway')) {
      cleared = (await clearAndroid(current.android)) && cleared
      next.android = null
      removed.push('android_gateway')
    }
    const remaining = transportsOf(next)
    if (remaining.length === 0) {
      await removeSmsAccount(c.env, db, account, now)
      return c.json({ success: true as const, phone_number: account.id, status: 'removed' as const, removed, remaining, upstream_cleared: cleared }, 200)
    }
    if (removed.length > 0) await writeSmsConfig(c.env, db, account.tenantId, account.id, next, now)
    return c.json(
      { success: true as const, phone_number: account.id, status: 'transport_removed' as const, removed, remaining, upstream_cleared: cleared },
      200
    )
  }
)
