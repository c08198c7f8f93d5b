/**
 * The custom channel's `deliver` (spec 4.7): one outbound message is a JSON POST to the user's webhook, unsigned
 * (the user's secret is in the URL), 10 s timeout, redirects not followed. Any 2xx accepts the message.
 */
import type { z } from 'zod'
import type { CustomOutboundPayload } from '../../../schema/api/custom-channel'
import type { MessageWithContact } from '../../db/messages'
import type { UrlPolicy } from '../../../common/public-url'
import { guardedPost } from '../../lib/guarded-post'
import { contentTypeFromUrl, fileNameFromUrl, isVoiceNoteType } from '../../../common/media'
import type { AccountContext, DeliveryResult } from '../../account/context'
import type { AccountRef } from '../../account/storage'
import { deliveryTimeoutMs, keyring, urlPolicy } from '../../config'
import { readConnectionConfig } from '../../db/channel-connections'
import { CustomConfig } from './config'

export const DELIVERY_USER_AGENT = 'MessagingGateway/1.0 (+custom-channel)'

export function customPayload({ message: m, contact }: MessageWithContact): z.infer<typeof CustomOutboundPayload> {
  const payload: z.infer<typeof CustomOutboundPayload> = {
    messageId: m.id,
    contactId: m.contactId,
    toId: contact?.externalId ?? null,
    body: m.text,
    isVoiceNote: false,
  }
  if (m.mediaUrl) {
    payload.mediaUrl = m.mediaUrl
    const type = m.mediaContentType ?? contentTypeFromUrl(m.mediaUrl)
    if (type) payload.mediaContentType = type
    payload.isVoiceNote = isVoiceNoteType(type)
    const name = fileNameFromUrl(m.mediaUrl)
    if (name) payload.mediaFileName = name
  }
  return payload
}

export async function postToCustomWebhook(webhookUrl: string, row: MessageWithContact, policy: UrlPolicy, timeoutMs: number): Promise<DeliveryResult> {
  const result = await guardedPost(webhookUrl, policy, {
    headers: { 'Content-Type': 'application/json', 'User-Agent': DELIVERY_USER_AGENT },
    body: JSON.stringify(customPayload(row)),
    timeoutMs,
  })
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

/** Reads the sealed webhook URL and POSTs the message to it. */
export async function deliverCustom(c: AccountContext, ref: AccountRef, row: MessageWithContact): Promise<DeliveryResult> {
  const config = await readConnectionConfig(c.db, keyring(c.env), ref.tenantId, ref.accountId, CustomConfig)
  if (!config) return { ok: false, code: null, error: 'the custom channel is not connected' }
  return postToCustomWebhook(config.webhook_url, row, urlPolicy(c.env), deliveryTimeoutMs(c.env))
}
