/**
 * The custom channel's `deliver` (spec 4.7): one outbound message is a JSON POST to the user's webhook, unsigned
 * (the user's secret is in the URL), 10 s timeout, redirects not followed. Any 2xx accepts the message. A quoted reply
 * carries `replyTo`, and an opted-in bridge gets reactions, typing and read marks the same way (`act`, issue 25).
 */
import type { z } from 'zod'
import type { CustomActionPayload, CustomOutboundPayload } from '../../../schema/api/custom-channel'
import { quotedMessages, type MessageWithContact } from '../../db/messages'
import type { UrlPolicy } from '../../../common/public-url'
import { guardedPost } from '../../lib/guarded-post'
import { contentTypeFromUrl, fileNameFromUrl, isVoiceNoteType } from '../../../common/media'
import type { AccountContext, ActionResult, ChannelAction, DeliveryResult } from '../../account/context'
import type { AccountRef } from '../../account/storage'
import { deliveryTimeoutMs, keyring, urlPolicy } from '../../config'
import { readConnectionConfig } from '../../db/channel-connections'
import { CustomConfig } from './config'

export const DELIVERY_USER_AGENT = 'MessagingGateway/1.0 (+custom-channel)'

/** `quoted`: the message a reply quotes (issue 25), with the bridge's messageSid for it when it has one. */
export function customPayload(
  { message: m, contact }: MessageWithContact,
  quoted: { id: string; upstreamId: string | null } | null = null
): z.infer<typeof CustomOutboundPayload> {
  const payload: z.infer<typeof CustomOutboundPayload> = {
    messageId: m.id,
    contactId: m.contactId,
    toId: contact?.externalId ?? null,
    body: m.text,
    isVoiceNote: false,
  }
  if (m.mediaUrl) {
    payload.mediaUrl = m.mediaUrl
    // The three attachment fields come together (spec 4.7): a type the URL does not tell is the generic binary one,
    // a URL without a last path segment names the file `attachment`.
    const type = m.mediaContentType ?? contentTypeFromUrl(m.mediaUrl)
    payload.mediaContentType = type ?? 'application/octet-stream'
    payload.isVoiceNote = isVoiceNoteType(type)
    payload.mediaFileName = fileNameFromUrl(m.mediaUrl) ?? 'attachment'
  }
  if (quoted) payload.replyTo = { messageId: quoted.id, messageSid: quoted.upstreamId }
  return payload
}

/** One JSON POST to the bridge (a message, or an opted-in chat action); unsigned, no redirects. */
function postJson(webhookUrl: string, body: unknown, policy: UrlPolicy, timeoutMs: number) {
  return guardedPost(webhookUrl, policy, {
    headers: { 'Content-Type': 'application/json', 'User-Agent': DELIVERY_USER_AGENT },
    body: JSON.stringify(body),
    timeoutMs,
  })
}

export async function postToCustomWebhook(
  webhookUrl: string,
  row: MessageWithContact,
  policy: UrlPolicy,
  timeoutMs: number,
  quoted: { id: string; upstreamId: string | null } | null = null
): Promise<DeliveryResult> {
  const result = await postJson(webhookUrl, customPayload(row, quoted), policy, timeoutMs)
  switch (result.kind) {
    case 'refused':
      return { ok: false, code: null, error: `the custom channel webhook URL is not allowed: ${result.reason}` }
    case 'timeout':
      return { ok: false, code: null, error: `the custom channel webhook did not answer within ${timeoutMs / 1000} s` }
    case 'network':
      return { ok: false, code: null, error: `the custom channel webhook could not be reached: ${result.error}` }
  }
  const { status } = result
  if (status >= 200 && status < 300) return { ok: true }
  if (status >= 300 && status < 400) {
    return { ok: false, code: status, error: `the custom channel webhook answered a redirect (HTTP ${status}), which is not followed` }
  }
  return { ok: false, code: status, error: `the custom channel webhook answered HTTP ${status}` }
}

/** Reads the sealed webhook URL and POSTs the message to it (with the message it quotes, for a reply). */
export async function deliverCustom(c: AccountContext, ref: AccountRef, row: MessageWithContact): Promise<DeliveryResult> {
  const config = await readConnectionConfig(c.db, keyring(c.env), ref.tenantId, ref.accountId, CustomConfig)
  if (!config) return { ok: false, code: null, error: 'the custom channel is not connected' }
  const replyTo = row.message.replyTo
  const quoted = replyTo ? ((await quotedMessages(c.db, ref.tenantId, [replyTo])).get(replyTo) ?? null) : null
  return postToCustomWebhook(config.webhook_url, row, urlPolicy(c.env), deliveryTimeoutMs(c.env), quoted)
}

function actionPayload(a: Exclude<ChannelAction, { kind: 'lookup' }>): z.infer<typeof CustomActionPayload> {
  const person = { contactId: a.contact.id, toId: a.contact.externalId }
  switch (a.kind) {
    case 'typing':
      return { action: 'typing', ...person }
    case 'read':
      return { action: 'read', ...person, messageId: a.target.messageId, messageSid: a.target.upstreamId }
    case 'react':
      return a.emoji === null
        ? { action: 'unreact', ...person, messageId: a.target.messageId, messageSid: a.target.upstreamId }
        : { action: 'react', ...person, messageId: a.target.messageId, messageSid: a.target.upstreamId, emoji: a.emoji }
  }
}

/**
 * Chat actions on the custom channel (issue 25): POSTed to the bridge's URL with an `action` field, only once the
 * bridge opted in (`actions: true`): a bridge written for spec 4.7 would take such a POST for a message.
 */
export async function actCustom(c: AccountContext, ref: AccountRef, action: ChannelAction): Promise<ActionResult> {
  if (action.kind === 'lookup') return { ok: false, status: 422, code: 'unsupported_on_channel', message: 'The custom channel has no number lookup' }
  const config = await readConnectionConfig(c.db, keyring(c.env), ref.tenantId, ref.accountId, CustomConfig)
  if (!config) return { ok: false, status: 409, code: 'account_not_connected', message: 'The custom channel is not connected' }
  if (!config.actions) {
    return {
      ok: false,
      status: 422,
      code: 'unsupported_on_channel',
      message:
        'Reactions, typing and read marks are not available on this custom channel: its bridge has not opted in (PUT /channels/custom with actions: true)',
    }
  }
  const timeoutMs = deliveryTimeoutMs(c.env)
  const result = await postJson(config.webhook_url, actionPayload(action), urlPolicy(c.env), timeoutMs)
  if (result.kind === 'answered' && result.status >= 200 && result.status < 300) return { ok: true }
  const why =
    result.kind === 'answered'
      ? `answered HTTP ${result.status}`
      : result.kind === 'timeout'
        ? `did not answer within ${timeoutMs / 1000} s`
        : result.kind === 'refused'
          ? `URL is not allowed: ${result.reason}`
          : `could not be reached: ${result.error}`
  return { ok: false, status: 502, code: 'action_refused', message: `The custom channel webhook ${why}` }
}
