/**
 * The per-connection callback URLs the providers call (publicRoutes in callbacks.ts): the tenant and the number are
 * in the path, the provider's signature authenticates the call. A Twilio status callback also carries a token
 * binding it to one message, so a valid signature cannot be replayed against another message.
 */
import { encryptionKey, publicOrigin } from '../../config'
import { hmacSha256Hex, timingSafeEqual } from '../../lib/crypto'
import { numberSegment } from './config'

export const SMS_PREFIX = '/v1/channels/sms'

export function twilioInboundUrl(env: Env, requestUrl: string | undefined, tenantId: string, number: string): string {
  return `${publicOrigin(env, requestUrl)}${SMS_PREFIX}/twilio/${tenantId}/${numberSegment(number)}/inbound`
}

export function gatewayWebhookUrl(env: Env, requestUrl: string | undefined, tenantId: string, number: string): string {
  return `${publicOrigin(env, requestUrl)}${SMS_PREFIX}/android-gateway/${tenantId}/${numberSegment(number)}/events`
}

function statusToken(env: Env, tenantId: string, number: string, messageId: string): Promise<string> {
  return hmacSha256Hex(encryptionKey(env), `sms-status\u0000${tenantId}\u0000${number}\u0000${messageId}`).then((h) => h.slice(0, 32))
}

/** The StatusCallback of one message. The origin is the one the inbound URL was set up with (stored at connect). */
export async function twilioStatusUrl(env: Env, inboundUrl: string, tenantId: string, number: string, messageId: string): Promise<string> {
  const origin = new URL(inboundUrl).origin
  const token = await statusToken(env, tenantId, number, messageId)
  return `${origin}${SMS_PREFIX}/twilio/${tenantId}/${numberSegment(number)}/status/${messageId}?token=${token}`
}

export async function statusTokenValid(env: Env, tenantId: string, number: string, messageId: string, token: string | undefined): Promise<boolean> {
  return token !== undefined && timingSafeEqual(await statusToken(env, tenantId, number, messageId), token)
}
