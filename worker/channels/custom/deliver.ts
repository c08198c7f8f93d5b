/**
 * Delivers one outbound message to the user's custom-channel webhook (spec 4.7): a JSON POST, unsigned (the
 * user's secret is in the URL), 10 s timeout, redirects not followed. Any 2xx accepts the message.
 */
import { z } from 'zod'
import type { CustomOutboundPayload } from '../../../schema/api/custom-channel'
import type { MessageWithContact } from '../../db/messages'
import { checkPublicUrl, type UrlPolicy } from '../../lib/public-url'
import { contentTypeFromUrl, fileNameFromUrl, isVoiceNoteType } from '../../lib/media'
import type { DeliveryResult } from '../outbound'

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
