/**
 * A relay-run channel's account (alpha, beta) as its routes handle it in the Worker: finding the tenant's account
 * for a number, adding or reviving it as `connecting`, and removing it. Shared by channels/alpha and channels/beta,
 * so each folder holds only what is its own; the session itself lives in the AccountDO (account/session/).
 */
import type { RelayChannel } from '../../../schema/frames'
import type { AccountRef } from '../../account/storage'
import { statusChange } from '../../events/account-status'
import { getAccount, type AccountRow } from '../../db/accounts'
import type { Db } from '../../db/client'
import type { Tenant } from '../../db/tenants'
import { ApiError } from '../../errors'
import { addAccount, removeAccount } from '../lifecycle'

/** A relay-run channel as these helpers name it: its stored id and the title its errors use. */
export type RelayRun = { id: RelayChannel; title: string }

export function relayRef(channel: RelayRun, tenantId: string, phone: string): AccountRef & { channel: RelayChannel } {
  return { tenantId, accountId: phone, channel: channel.id }
}

/** The tenant's account for this number on the channel, or null (never connected, removed, or on another channel). */
export async function findRelayAccount(db: Db, channel: RelayRun, tenantId: string, phone: string): Promise<AccountRow | null> {
  const account = await getAccount(db, tenantId, phone)
  return account?.channel === channel.id ? account : null
}

/** The tenant's account for this number on the channel, or a 404 in the channel-connection error shape. */
export async function relayAccount(db: Db, channel: RelayRun, tenantId: string, phone: string): Promise<AccountRow> {
  const account = await findRelayAccount(db, channel, tenantId, phone)
  if (!account) throw new ApiError(404, 'connection_not_found', `No ${channel.title} connection for ${phone} on this API key`)
  return account
}

/**
 * Adds the account (`connecting`; `ramp_day` 1 where the channel warms up) within the plan's cap, or moves an
 * existing one back to `connecting`.
 */
export async function ensureConnecting(db: Db, channel: RelayRun, tenant: Tenant, phone: string): Promise<void> {
  const now = Date.now()
  const { account } = await addAccount(db, tenant, { id: phone, channel: channel.id, identifier: phone, status: 'connecting' }, now)
  const [first, ...rest] = statusChange(db, account, 'connecting', null, now).statements
  if (first) await db.batch([first, ...rest])
}

/**
 * Removes the number's account on the channel (the AccountDO logs the session out through the relay when one is
 * reachable; removal succeeds either way, spec 4.3 and 4.4). False when the tenant has no such account.
 */
export async function removeRelayAccount(env: Env, db: Db, channel: RelayRun, tenantId: string, phone: string): Promise<boolean> {
  const account = await getAccount(db, tenantId, phone)
  if (account?.channel !== channel.id) return false
  await removeAccount(env, db, account, Date.now())
  return true
}
