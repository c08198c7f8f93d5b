/**
 * Connecting the custom channel (spec 4.7): setting the webhook adds the `custom` account through the lifecycle
 * (plan cap; connected, with `account.connected`, once the URL is stored), and the state shown back masks the URL's
 * secret part.
 */
import { addAccount } from '../lifecycle'
import { statusChange } from '../../events/account-status'
import { keyring, publicOrigin } from '../../config'
import type { AccountRow } from '../../db/accounts'
import { sealConnectionConfig, upsertConnectionConfig } from '../../db/channel-connections'
import type { Db } from '../../db/client'
import type { Tenant } from '../../db/tenants'
import { isoOrNull } from '../../lib/time'
import { commitEvents } from '../../webhooks/emit'
import { CUSTOM_ACCOUNT_ID, CUSTOM_KIND, maskUrl } from './config'

export function customState(env: Env, requestUrl: string, account: AccountRow | undefined, webhookUrl: string | null, actions = false) {
  return {
    success: true as const,
    account_id: CUSTOM_ACCOUNT_ID,
    channel: 'custom' as const,
    status: account ? (account.status === 'restricted' ? ('restricted' as const) : ('connected' as const)) : ('not_connected' as const),
    webhook_url: webhookUrl ? maskUrl(webhookUrl) : null,
    inbound_url: `${publicOrigin(env, requestUrl)}/v1/channels/custom/inbound`,
    connected_at: isoOrNull(account?.connectedAt),
    actions,
  }
}

/** Adds (or updates) the custom account with its sealed webhook URL; answers the account as it now is. */
export async function setCustomWebhook(env: Env, db: Db, tenant: Tenant, webhookUrl: string, host: string, actions: boolean): Promise<AccountRow> {
  const now = Date.now()
  // Added as `connecting`: it turns `connected` (with its event) in the same batch that stores the URL.
  const { account } = await addAccount(db, tenant, { id: CUSTOM_ACCOUNT_ID, channel: 'custom', identifier: host, status: 'connecting' }, now)
  const sealed = await sealConnectionConfig(keyring(env), tenant.id, CUSTOM_ACCOUNT_ID, { webhook_url: webhookUrl, actions })
  // A URL change never lifts a restriction (only the service's review does); a disconnected account reconnects.
  const change = statusChange(
    db,
    account,
    account.status === 'restricted' ? 'restricted' : 'connected',
    account.status === 'restricted' ? account.statusReason : null,
    now,
    host
  )
  await commitEvents(env, db, [upsertConnectionConfig(db, tenant.id, CUSTOM_ACCOUNT_ID, CUSTOM_KIND, sealed, now), ...change.statements])
  return change.account
}
