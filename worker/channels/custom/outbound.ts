/** The custom channel as an OutboundChannel: reads the sealed webhook URL and POSTs each message to it. */
import type { AccountContext } from '../../account/context'
import type { AccountRef } from '../../account/storage'
import { deliveryTimeoutMs, encryptionKey, urlPolicy } from '../../config'
import { readConnectionConfig } from '../../db/channel-connections'
import type { OutboundChannel } from '../outbound'
import { CustomConfig } from './config'
import { postToCustomWebhook } from './deliver'

export function customOutbound(c: AccountContext, ref: AccountRef): OutboundChannel {
  return async (row) => {
    const config = await readConnectionConfig(c.db, encryptionKey(c.env), ref.tenantId, ref.accountId, CustomConfig)
    if (!config) return { ok: false, code: null, error: 'the custom channel is not connected' }
    return postToCustomWebhook(config.webhook_url, row, urlPolicy(c.env), deliveryTimeoutMs(c.env))
  }
}
