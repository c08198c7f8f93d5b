/**
 * Adding a transport to the number's `sms` account and taking one away: the account is created (within the plan's
 * cap, counted once whatever the transports) with its first transport and removed with its last. Each change of the
 * sealed config and the account row commits in one batch with its account event.
 */
import { accountStub } from '../../account/account-do'
import { accountStatusUpdate, deleteAccountStatement, getAccount, insertAccountWithinCap, type AccountRow } from '../../db/accounts'
import type { Db } from '../../db/client'
import { deleteConnectionConfig } from '../../db/channel-connections'
import { insertEvent } from '../../db/events'
import type { Tenant } from '../../db/tenants'
import { ApiError } from '../../errors'
import { accountEventPayload } from '../../events/payloads'
import { planOf } from '../../plans'
import { commitEvents } from '../../webhooks/emit'
import { sealSmsConfig, smsConfigStatement, type SmsConfig } from './config'

/** The number's account, created when missing. Refuses a number held by another channel or beyond the cap. */
export async function ensureSmsAccount(db: Db, tenant: Tenant, number: string, now: number): Promise<{ account: AccountRow; created: boolean }> {
  const existing = await getAccount(db, tenant.id, number)
  if (existing) {
    if (existing.channel !== 'sms') {
      throw new ApiError(409, 'account_exists', `${number} is already connected on the ${existing.channel} channel; disconnect it there first`)
    }
    return { account: existing, created: false }
  }
  const cap = planOf(tenant.plan).accountsCap
  const created = await insertAccountWithinCap(
    db,
    { tenantId: tenant.id, id: number, channel: 'sms', identifier: number, status: 'connected', connectedAt: now, now },
    cap
  )
  const account = await getAccount(db, tenant.id, number)
  if (!account || account.channel !== 'sms') {
    throw new ApiError(409, 'account_cap_reached', `Your plan allows ${cap} connected account${cap === 1 ? '' : 's'}; disconnect one first`)
  }
  return { account, created }
}

/** Stores the config; a new account gets its `account.connected` event in the same batch. */
export async function saveSmsConfig(env: Env, db: Db, account: AccountRow, created: boolean, config: SmsConfig, now: number): Promise<void> {
  const write = smsConfigStatement(db, account.tenantId, account.id, await sealSmsConfig(env, config), now)
  if (created) {
    await commitEvents(env, db, [write, insertEvent(db, account.tenantId, account.id, accountEventPayload('account.connected', account, null, now), now)])
  } else if (account.status === 'disconnected') {
    const connected = { ...account, status: 'connected' as const }
    await commitEvents(env, db, [
      write,
      accountStatusUpdate(db, account.tenantId, account.id, { status: 'connected', reason: null, connectedAt: now, now }),
      insertEvent(db, account.tenantId, account.id, accountEventPayload('account.connected', connected, null, now), now),
    ])
  } else {
    await write
  }
}

/** The last transport went: the account and its config go, queued messages fail, `account.disconnected` fires. */
export async function removeSmsAccount(env: Env, db: Db, account: AccountRow, now: number): Promise<void> {
  const gone = { ...account, status: 'disconnected' as const }
  await commitEvents(env, db, [
    deleteConnectionConfig(db, account.tenantId, account.id),
    insertEvent(db, account.tenantId, account.id, accountEventPayload('account.disconnected', gone, 'removed', now), now),
    deleteAccountStatement(db, account.tenantId, account.id),
  ])
  await accountStub(env, account.tenantId, account.id).removed({ tenantId: account.tenantId, accountId: account.id, channel: 'sms' })
}
