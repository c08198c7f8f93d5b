/**
 * /v1/channels/custom (spec 4.7): the channel a user bridges with webhooks. PUT sets the webhook URL (creating the
 * `custom` account, connected at once), GET reads its state, DELETE disconnects it, POST /inbound pushes a message in.
 */
import { createRoute } from '@hono/zod-openapi'
import { IdempotencyKeyHeader } from '../../../schema/api/common'
import { CustomChannelRemoved, CustomChannelState, CustomInboundBody, CustomInboundResult, SetCustomWebhookBody } from '../../../schema/api/custom-channel'
import { removeAccount } from '../lifecycle'
import { keyring, urlPolicy } from '../../config'
import { getAccount } from '../../db/accounts'
import { readConnectionConfig } from '../../db/channel-connections'
import { ApiError } from '../../errors'
import { accountStub } from '../../lib/objects'
import { statusErrors } from '../../lib/openapi-responses'
import { checkPublicUrl } from '../../../common/public-url'
import { resourceApp } from '../../validate'
import { CUSTOM_ACCOUNT_ID, CustomConfig } from './config'
import { customState, setCustomWebhook } from './connect'
import { customInbound, customReaction } from './inbound'
import { enforce } from '../../lib/rate-limit'

export const customChannelRoutes = resourceApp()

const errors = (codes: number[]) => statusErrors(codes)

customChannelRoutes.openapi(
  createRoute({
    method: 'put',
    path: '/',
    operationId: 'set_custom_channel_webhook',
    tags: ['Custom channel'],
    summary: 'Set the custom channel webhook',
    description: [
      "Connects or updates the custom channel: outbound messages are POSTed as JSON to this public https URL (unsigned, so put a secret in the URL). The custom account counts against the plan's account cap.",
      'Creates or updates your custom channel. Outbound messages are POSTed as JSON to this URL (unsigned: put a secret in the URL). It must be a public https URL; private, loopback, link-local and metadata addresses and this service’s own hosts are refused. The `custom` account counts against the plan’s account cap and is connected as soon as the URL is set.',
    ].join('\n\n'),
    request: { body: { required: true, content: { 'application/json': { schema: SetCustomWebhookBody } } } },
    responses: { 200: { description: 'The channel state', content: { 'application/json': { schema: CustomChannelState } } }, ...errors([400, 401, 409]) },
  }),
  async (c) => {
    const { webhook_url, actions: given } = c.req.valid('json')
    const check = checkPublicUrl(webhook_url, urlPolicy(c.env, c.req.url))
    if (!check.ok) throw new ApiError(400, 'invalid_webhook_url', `webhook_url is not allowed: ${check.reason}`)
    const db = c.var.db
    const tenant = c.get('tenant')
    // Omitted, the bridge's opt-in to chat actions stays as it was (issue 25).
    const actions = given ?? (await readConnectionConfig(db, keyring(c.env), tenant.id, CUSTOM_ACCOUNT_ID, CustomConfig))?.actions ?? false
    const account = await setCustomWebhook(c.env, db, tenant, webhook_url, check.url.hostname, actions)
    return c.json(customState(c.env, c.req.url, account, webhook_url, actions), 200)
  }
)

customChannelRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/',
    operationId: 'get_custom_channel_status',
    tags: ['Custom channel'],
    summary: 'Get the custom channel',
    description:
      'Reports whether the custom channel is connected, its webhook URL with the secret part masked, and the URL a bridge pushes inbound messages to.',
    responses: { 200: { description: 'The channel state', content: { 'application/json': { schema: CustomChannelState } } }, ...errors([401]) },
  }),
  async (c) => {
    const tenant = c.get('tenant')
    const db = c.var.db
    const account = await getAccount(db, tenant.id, CUSTOM_ACCOUNT_ID)
    const config = account ? await readConnectionConfig(db, keyring(c.env), tenant.id, CUSTOM_ACCOUNT_ID, CustomConfig) : undefined
    return c.json(customState(c.env, c.req.url, account, config?.webhook_url ?? null, config?.actions ?? false), 200)
  }
)

customChannelRoutes.openapi(
  createRoute({
    method: 'delete',
    path: '/',
    operationId: 'disconnect_custom_channel',
    tags: ['Custom channel'],
    summary: 'Disconnect the custom channel',
    description: [
      'Removes the custom channel: replies stop and queued messages fail, history stays; ask the user first. Idempotent.',
      'The `custom` account and its webhook URL are removed; messages still queued are marked failed.',
    ].join('\n\n'),
    responses: { 200: { description: 'Removed (or nothing to remove)', content: { 'application/json': { schema: CustomChannelRemoved } } }, ...errors([401]) },
  }),
  async (c) => {
    const tenant = c.get('tenant')
    const db = c.var.db
    const account = await getAccount(db, tenant.id, CUSTOM_ACCOUNT_ID)
    if (!account) return c.json({ success: true as const, account_id: CUSTOM_ACCOUNT_ID, status: 'not_connected' as const }, 200)
    await removeAccount(c.env, db, account, Date.now())
    return c.json({ success: true as const, account_id: CUSTOM_ACCOUNT_ID, status: 'removed' as const }, 200)
  }
)

customChannelRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/inbound',
    operationId: 'push_custom_channel_message',
    tags: ['Custom channel'],
    summary: 'Push an inbound custom-channel message',
    description: [
      "Stores a message as if a person wrote it on the user's bridge (customData.body is required; fromId names the sender); it reaches wait_for_messages like any inbound message. Meant for bridges and tests; a repeated messageSid is stored once.",
      'Your bridge pushes a message a person sent on your side. The contact is created on its first message (external id = `fromId`; a push without `fromId` comes from one sender per account, external id `unknown`). `mediaUrl` must be a public https URL. The message then reaches waits and `message.received` webhooks. A repeated push with the same `messageSid` is stored once and answers `duplicate: true`; a `reaction` naming no message of that person’s chat answers 404 `message_not_found`. Needs the owner’s key: a push is a person writing in, so an agent’s key could otherwise fake a first contact and skip approval and the new-contact rules (docs/agent-safety.md).',
    ].join('\n\n'),
    request: { headers: IdempotencyKeyHeader, body: { required: true, content: { 'application/json': { schema: CustomInboundBody } } } },
    responses: { 200: { description: 'Stored', content: { 'application/json': { schema: CustomInboundResult } } }, ...errors([400, 401, 404, 409, 422, 429]) },
  }),
  async (c) => {
    const { customData: d } = c.req.valid('json')
    await enforce(c, 'RL_INBOUND', c.get('tenant').id, 'Too many inbound pushes for this account; slow down')
    // Spec 4.7: mediaUrl is a public https URL; agents and relays may fetch it, so the one SSRF guard vets it.
    const media = d.mediaUrl === undefined ? undefined : checkPublicUrl(d.mediaUrl, urlPolicy(c.env, c.req.url))
    if (media && !media.ok) throw new ApiError(400, 'invalid_media_url', `customData.mediaUrl is not allowed: ${media.reason}`)
    const tenant = c.get('tenant')
    if (d.reaction) return c.json(await customReaction(c.env, c.var.db, tenant.id, d, d.reaction), 200)
    const outcome = await accountStub(c.env, tenant.id, CUSTOM_ACCOUNT_ID).ingest(await customInbound(tenant.id, d))
    if (!outcome.stored && outcome.reason === 'account_not_found') {
      throw new ApiError(409, 'channel_not_connected', 'The custom channel is not connected; set its webhook with PUT /channels/custom first')
    }
    if (!outcome.stored) throw new ApiError(422, 'contact_private', 'This contact is marked private; the message was not stored')
    return c.json({ success: true as const, message_id: outcome.messageId, contact_id: outcome.contactId, duplicate: outcome.duplicate }, 200)
  }
)
