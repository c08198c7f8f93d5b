/**
 * The number's `sms` account through the account lifecycle: added (within the plan's cap, counted once whatever the
 * transports) with its first transport, back to connected when a transport is connected again, removed with its
 * last. Each change of the sealed config commits in one batch with the account's status change and event.
 */
import type { BatchItem } from 'drizzle-orm/batch'
import { addAccount, removeAccount } from '../lifecycle'
import { statusChange } from '../../events/account-status'
import { deleteAccountStatement, type AccountRow } from '../../db/accounts'
import type { Db } from '../../db/client'
import { insertEvent } from '../../db/events'
import type { Tenant } from '../../db/tenants'
import { accountEventPayload } from '../../events/payloads'
import { commitEvents } from '../../webhooks/emit'
import { sealSmsConfig, smsConfigStatement, type SmsConfig } from './config'

/** The number's account, added when missing; 409 for a number on another channel or beyond the cap. */
export function ensureSmsAccount(db: Db, tenant: Tenant, number: string, now: number) {
  return addAccount(db, tenant, { id: number, channel: 'sms', identifier: number, status: 'connected' }, now)
}

/** A connect that added the account and then failed upstream leaves nothing behind. */
export async function undoAdded(db: Db, account: AccountRow): Promise<void> {
  await deleteAccountStatement(db, account.tenantId, account.id)
}

/**
 * Stores the config. A new account gets its `account.connected` event in the same batch; an existing one moves to
 * connected (a restriction stays: only the service's review lifts it).
 */
export async function saveSmsConfig(env: Env, db: Db, account: AccountRow, created: boolean, config: SmsConfig, now: number): Promise<AccountRow> {
  const write = smsConfigStatement(db, account.tenantId, account.id, await sealSmsConfig(env, account.tenantId, account.id, config), now)
  if (created) {
    await commitEvents(env, db, [write, insertEvent(db, account.tenantId, account.id, accountEventPayload('account.connected', account, null, now), now)])
    return account
  }
  const change = account.status === 'restricted' ? { account, statements: [] as BatchItem<'sqlite'>[] } : statusChange(db, account, 'connected', null, now)
  await commitEvents(env, db, [write, ...change.statements])
  return change.account
}

/** The last transport went: the account is removed (its config, row and queued messages; `account.disconnected`). */
export function removeSmsAccount(env: Env, db: Db, account: AccountRow, now: number): Promise<void> {
  return removeAccount(env, db, account, now)
}
