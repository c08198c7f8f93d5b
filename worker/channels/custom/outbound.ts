/**
 * The custom channel's `deliver` (spec 4.7): one outbound message is a JSON POST to the user's webhook, unsigned
 * (the user's secret is in the URL), 10 s timeout, redirects not followed. Any 2xx accepts the message.
 */
import { z } from 'zod'
import type { CustomOutboundPayload } from '../../../schema/api/custom-channel'
import type { MessageWithContact } from '../../db/messages'
import { checkPublicUrl, type UrlPolicy } from '../../../common/public-url'
import { contentTypeFromUrl, fileNameFromUrl } from '../../../common/media'
import type { AccountContext } from '../../account/context'
import type { AccountRef } from '../../account/storage'
import { deliveryTimeoutMs, encryptionKey, urlPolicy } from '../../config'
import { readConnectionConfig } from '../../db/channel-connections'
import type { DeliveryResult } from '../contract'
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
    const name = fileNameFromUrl(m.mediaUrl)
    if (name) payload.mediaFileName = name
  }
  return payload
}

export async function postToCustomWebhook(
  webhookUrl: string,
  row: MessageWithContact,
  policy: UrlPolicy,
  timeoutMs: number
): Promise<DeliveryResult> {
  // Checked again at delivery time: the policy may be stricter now than when the URL was saved.
  const check = checkPublicUrl(webhookUrl, policy)
  if (!check.ok) return { ok: false, code: null, error: `the custom channel webhook URL is not allowed: ${check.reason}` }
  let res: Response
  try {
    res = await fetch(check.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'User-Agent': DELIVERY_USER_AGENT },
      body: JSON.stringify(customPayload(row)),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    })
  } catch (err) {
    const name = err instanceof Error ? err.name : ''
    if (name === 'TimeoutError' || name === 'AbortError') {
      return { ok: false, code: null, error: `the custom channel webhook did not answer within ${timeoutMs / 1000} s` }
    }
    return { ok: false, code: null, error: `the custom channel webhook could not be reached: ${err instanceof Error ? err.message : String(err)}` }
  }
  // The body is not needed; cancelling it frees the connection.
  await res.body?.cancel()
  if (res.status >= 200 && res.status < 300) return { ok: true }
  if (res.status >= 300 && res.status < 400) {
    return { ok: false, code: res.status, error: `the custom channel webhook answered a redirect (HTTP ${res.status}), which is not followed` }
  }
  return { ok: false, code: res.status, error: `the custom channel webhook answered HTTP ${res.status}` }
}

/** Reads the sealed webhook URL and POSTs the message to it. */
export async function deliverCustom(c: AccountContext, ref: AccountRef, row: MessageWithContact): Promise<DeliveryResult> {
  const config = await readConnectionConfig(c.db, encryptionKey(c.env), ref.tenantId, ref.accountId, CustomConfig)
  if (!config) return { ok: false, code: null, error: 'the custom channel is not connected' }
  return postToCustomWebhook(config.webhook_url, row, urlPolicy(c.env), deliveryTimeoutMs(c.env))
}
