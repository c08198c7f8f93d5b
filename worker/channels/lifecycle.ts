/**
 * The account lifecycle every channel uses from its routes (spec 2 and 3), in the Worker: add an account within the
 * plan's cap, remove it. Its status moves with its `account.*` event through events/account-status.ts, which the
 * AccountDO's session code uses too.
 */
import { removeAccountMedia } from '../media/retention'
import type { Channel } from '../../schema/d1'
import { deleteAccountStatement, getAccount, insertAccountWithinCap, reviveAccountWithinCap, type AccountRow } from '../db/accounts'
import { deleteConnectionConfig } from '../db/channel-connections'
import type { Db } from '../db/client'
import { insertEvent } from '../db/events'
import type { Tenant } from '../db/tenants'
import { ApiError } from '../errors'
import { accountEventPayload } from '../events/payloads'
import { accountStub } from '../lib/objects'
import { planOf } from '../plans'
import { commitEvents } from '../webhooks/emit'

export type NewAccountInput = {
  id: string
  channel: Channel
  identifier: string
  /** `connecting` for channels that link through a flow; `connected` for one that works once configured. */
  status: 'connecting' | 'connected'
}

export type AddedAccount = {
  account: AccountRow
  /** True when this call added the account (false: it existed, or a concurrent call of the same connect added it). */
  created: boolean
}

function capReached(cap: number): ApiError {
  return new ApiError(409, 'account_cap_reached', `Your plan allows ${cap} connected account${cap === 1 ? '' : 's'}; disconnect one first`)
}

/**
 * Adds the account within the plan's cap (connected or connecting accounts hold a place; disconnected ones do not),
 * or brings a disconnected one of the same channel back to `connecting` under the same rule. An id already used by
 * another channel is 409 `account_exists`; a full plan is 409 `account_cap_reached`.
 */
export async function addAccount(db: Db, tenant: Tenant, a: NewAccountInput, now: number): Promise<AddedAccount> {
  const cap = planOf(tenant.plan).accountsCap
  const existing = await getAccount(db, tenant.id, a.id)
  if (existing) {
    if (existing.channel !== a.channel) throw new ApiError(409, 'account_exists', `${a.id} is already an account on the ${existing.channel} channel`)
    if (existing.status !== 'disconnected') return { account: existing, created: false }
    if (!(await reviveAccountWithinCap(db, tenant.id, a.id, cap, now))) {
      // Lost a race with a concurrent connect of the same account, which revived it first.
      const again = await getAccount(db, tenant.id, a.id)
      if (again && again.status !== 'disconnected') return { account: again, created: false }
      throw capReached(cap)
    }
    return { account: { ...existing, status: 'connecting', statusReason: null, connectedAt: null, updatedAt: now }, created: false }
  }
  const connectedAt = a.status === 'connected' ? now : null
  const added = await insertAccountWithinCap(
    db,
    { tenantId: tenant.id, id: a.id, channel: a.channel, identifier: a.identifier, status: a.status, connectedAt, now },
    cap
  )
  const account = await getAccount(db, tenant.id, a.id)
  if (account?.channel === a.channel) return { account, created: added }
  if (account) throw new ApiError(409, 'account_exists', `${a.id} is already an account on the ${account.channel} channel`)
  throw capReached(cap)
}

/**
 * Removes the account: its `account.disconnected` event (reason `removed`), its stored connection settings and its
 * row go in one batch (once the row is gone no new inbound is accepted), then its AccountDO fails what is still
 * queued, logs a relay session out when one is reachable, and stops its timers. History stays. Never fails on the
 * object's side: the removal has happened once the batch committed.
 */
export async function removeAccount(env: Env, db: Db, account: AccountRow, now: number): Promise<void> {
  const gone = { ...account, status: 'disconnected' as const }
  await commitEvents(env, db, [
    insertEvent(db, account.tenantId, account.id, accountEventPayload('account.disconnected', gone, 'removed', now), now),
    deleteConnectionConfig(db, account.tenantId, account.id),
    deleteAccountStatement(db, account.tenantId, account.id),
  ])
  // Its media goes with it (docs/media.md), after the row: no new upload can name the account any more.
  await removeAccountMedia(env.MEDIA, db, account.tenantId, account.id).catch((err: unknown) =>
    console.error(JSON.stringify({ msg: 'account remove: media removal failed', account: account.id, error: String(err) }))
  )
  try {
    await accountStub(env, account.tenantId, account.id).removed({ tenantId: account.tenantId, accountId: account.id, channel: account.channel })
  } catch (err) {
    console.error(JSON.stringify({ msg: 'account remove: account object failed', account: account.id, error: String(err) }))
  }
}
