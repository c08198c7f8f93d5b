/**
 * /v1/channels/custom (spec 4.7): the channel a user bridges with webhooks. PUT sets the webhook URL (creating the
 * `custom` account, connected at once), GET reads its state, DELETE disconnects it, POST /inbound pushes a message in.
 */
import { createRoute } from '@hono/zod-openapi'
import {
  CustomChannelRemoved,
  CustomChannelState,
  CustomInboundBody,
  CustomInboundResult,
  SetCustomWebhookBody,
} from '../../schema/api/custom-channel'
import { accountStub } from '../account/account-do'
import { CUSTOM_ACCOUNT_ID, CUSTOM_KIND, CustomConfig, maskUrl } from '../channels/custom/config'
import { encryptionKey, publicOrigin, urlPolicy } from '../config'
import { accountStatusUpdate, deleteAccountStatement, getAccount, insertAccountWithinCap, type AccountRow } from '../db/accounts'
import { deleteConnectionConfig, readConnectionConfig, sealConnectionConfig, upsertConnectionConfig } from '../db/channel-connections'
import { database } from '../db/client'
import { insertEvent } from '../db/events'
import { ApiError } from '../errors'
import { enforce } from '../middleware/rate-limit'
import { accountEventPayload } from '../events/payloads'
import { contactIdFor } from '../lib/ids'
import { checkPublicUrl } from '../lib/public-url'
import { isoOrNull } from '../lib/time'
import { planOf } from '../plans'
import { resourceApp } from '../validate'
import { commitEvents } from '../webhooks/emit'
import { statusErrors } from './openapi-responses'

export const customChannelRoutes = resourceApp()

const REF = (tenantId: string) => ({ tenantId, accountId: CUSTOM_ACCOUNT_ID, channel: 'custom' as const })
const errors = (codes: number[]) => statusErrors(codes)

function state(c: { env: Env; req: { url: string } }, account: AccountRow | undefined, webhookUrl: string | null) {
  return {
    success: true as const,
    account_id: CUSTOM_ACCOUNT_ID,
    channel: 'custom' as const,
    status: account ? (account.status === 'restricted' ? ('restricted' as const) : ('connected' as const)) : ('not_connected' as const),
    webhook_url: webhookUrl ? maskUrl(webhookUrl) : null,
    inbound_url: `${publicOrigin(c.env, c.req.url)}/v1/channels/custom/inbound`,
    connected_at: isoOrNull(account?.connectedAt),
  }
}

customChannelRoutes.openapi(
  createRoute({
    method: 'put',
    path: '/',
    tags: ['Custom channel'],
    summary: 'Set the custom channel webhook (tool set_custom_channel_webhook)',
    description:
      'Creates or updates your custom channel. Outbound messages are POSTed as JSON to this URL (unsigned: put a secret in the URL). It must be a public https URL; private, loopback, link-local and metadata addresses and this service’s own hosts are refused. The `custom` account counts against the plan’s account cap and is connected as soon as the URL is set.',
    request: { body: { required: true, content: { 'application/json': { schema: SetCustomWebhookBody } } } },
    responses: { 200: { description: 'The channel state', content: { 'application/json': { schema: CustomChannelState } } }, ...errors([400, 401, 409]) },
  }),
  async (c) => {
    const { webhook_url } = c.req.valid('json')
    const check = checkPublicUrl(webhook_url, urlPolicy(c.env, c.req.url))
    if (!check.ok) throw new ApiError(400, 'invalid_webhook_url', `webhook_url is not allowed: ${check.reason}`)
    const tenant = c.get('tenant')
    const db = database(c.env.DB)
    const now = Date.now()
    let account = await getAccount(db, tenant.id, CUSTOM_ACCOUNT_ID)
    let created = false
    if (!account) {
      created = await insertAccountWithinCap(
        db,
        { tenantId: tenant.id, id: CUSTOM_ACCOUNT_ID, channel: 'custom', identifier: check.url.hostname, status: 'connected', connectedAt: now, now },
        planOf(tenant.plan).accountsCap
      )
      // Not added: either the cap refused it, or a concurrent PUT created the account first (then this is an update).
      account = await getAccount(db, tenant.id, CUSTOM_ACCOUNT_ID)
      if (!account) {
        const cap = planOf(tenant.plan).accountsCap
        throw new ApiError(409, 'account_cap_reached', `Your plan allows ${cap} connected account${cap === 1 ? '' : 's'}; disconnect one first`)
      }
    }
    const sealed = await sealConnectionConfig(encryptionKey(c.env), { webhook_url })
    const writes = [
      upsertConnectionConfig(db, tenant.id, CUSTOM_ACCOUNT_ID, CUSTOM_KIND, sealed, now),
      // A URL change never lifts a restriction; only the service's review does.
      account.status === 'restricted'
        ? accountStatusUpdate(db, tenant.id, CUSTOM_ACCOUNT_ID, { status: 'restricted', reason: account.statusReason, identifier: check.url.hostname, now })
        : accountStatusUpdate(db, tenant.id, CUSTOM_ACCOUNT_ID, { status: 'connected', reason: null, identifier: check.url.hostname, now }),
    ] as const
    if (created) {
      await commitEvents(c.env, db, [...writes, insertEvent(db, tenant.id, CUSTOM_ACCOUNT_ID, accountEventPayload('account.connected', account, null, now), now)])
    } else {
      await db.batch(writes)
    }
    return c.json(state(c, account, webhook_url), 200)
  }
)

customChannelRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/',
    tags: ['Custom channel'],
    summary: 'Get the custom channel state (tool get_custom_channel_status)',
    description: 'Whether the custom channel is connected, the webhook URL with its secret part masked, and the URL your bridge pushes inbound messages to.',
    responses: { 200: { description: 'The channel state', content: { 'application/json': { schema: CustomChannelState } } }, ...errors([401]) },
  }),
  async (c) => {
    const tenant = c.get('tenant')
    const db = database(c.env.DB)
    const account = await getAccount(db, tenant.id, CUSTOM_ACCOUNT_ID)
    const config = account ? await readConnectionConfig(db, encryptionKey(c.env), tenant.id, CUSTOM_ACCOUNT_ID, CustomConfig) : undefined
    return c.json(state(c, account, config?.webhook_url ?? null), 200)
  }
)

customChannelRoutes.openapi(
  createRoute({
    method: 'delete',
    path: '/',
    tags: ['Custom channel'],
    summary: 'Disconnect the custom channel (tool disconnect_custom_channel)',
    description: 'Removes the custom account and its webhook URL; replies stop and messages still queued are marked failed. Message history stays. Idempotent.',
    responses: { 200: { description: 'Removed (or nothing to remove)', content: { 'application/json': { schema: CustomChannelRemoved } } }, ...errors([401]) },
  }),
  async (c) => {
    const tenant = c.get('tenant')
    const db = database(c.env.DB)
    const now = Date.now()
    const account = await getAccount(db, tenant.id, CUSTOM_ACCOUNT_ID)
    if (!account) return c.json({ success: true as const, account_id: CUSTOM_ACCOUNT_ID, status: 'not_connected' as const }, 200)
    const gone = { ...account, status: 'disconnected' as const }
    // The row goes first: once it is gone no new inbound can be accepted; then the DO fails what is still queued.
    await commitEvents(c.env, db, [
      deleteConnectionConfig(db, tenant.id, CUSTOM_ACCOUNT_ID),
      insertEvent(db, tenant.id, CUSTOM_ACCOUNT_ID, accountEventPayload('account.disconnected', gone, 'removed', now), now),
      deleteAccountStatement(db, tenant.id, CUSTOM_ACCOUNT_ID),
    ])
    await accountStub(c.env, tenant.id, CUSTOM_ACCOUNT_ID).removed(REF(tenant.id))
    return c.json({ success: true as const, account_id: CUSTOM_ACCOUNT_ID, status: 'removed' as const }, 200)
  }
)

customChannelRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/inbound',
    tags: ['Custom channel'],
    summary: 'Push an inbound message (tool push_custom_channel_message)',
    description:
      'Your bridge pushes a message a person sent on your side. The contact is created on its first message (external id = `fromId`). `mediaUrl` must be a public https URL. The message then reaches waits and `message.received` webhooks. A repeated push with the same `messageSid` is stored once and answers `duplicate: true`.',
    request: { body: { required: true, content: { 'application/json': { schema: CustomInboundBody } } } },
    responses: { 200: { description: 'Stored', content: { 'application/json': { schema: CustomInboundResult } } }, ...errors([400, 401, 409, 422, 429]) },
  }),
  async (c) => {
    const { customData: d } = c.req.valid('json')
    await enforce(c, 'RL_INBOUND', c.get('tenant').id, 'Too many inbound pushes for this account; slow down')
    // Spec 4.7: mediaUrl is a public https URL; agents and relays may fetch it, so the one SSRF guard vets it.
    const media = d.mediaUrl === undefined ? undefined : checkPublicUrl(d.mediaUrl, urlPolicy(c.env, c.req.url))
    if (media && !media.ok) throw new ApiError(400, 'invalid_media_url', `customData.mediaUrl is not allowed: ${media.reason}`)
    const tenant = c.get('tenant')
    const outcome = await accountStub(c.env, tenant.id, CUSTOM_ACCOUNT_ID).ingest({
      ref: REF(tenant.id),
      contact: {
        id: await contactIdFor(tenant.id, CUSTOM_ACCOUNT_ID, { kind: 'external', value: d.fromId }),
        tenantId: tenant.id,
        accountId: CUSTOM_ACCOUNT_ID,
        channel: 'custom',
        externalId: d.fromId,
        firstName: d.firstName ?? null,
        lastName: d.lastName ?? null,
        email: d.email ?? null,
      },
      text: d.body,
      mediaUrl: d.mediaUrl ?? null,
      mediaContentType: d.mediaContentType ?? null,
      upstreamId: d.messageSid ?? null,
    })
    if (!outcome.stored && outcome.reason === 'account_not_found') {
      throw new ApiError(409, 'channel_not_connected', 'The custom channel is not connected; set its webhook with PUT /channels/custom first')
    }
    if (!outcome.stored) throw new ApiError(422, 'contact_private', 'This contact is marked private; the message was not stored')
    return c.json({ success: true as const, message_id: outcome.messageId, contact_id: outcome.contactId, duplicate: outcome.duplicate }, 200)
  }
)
