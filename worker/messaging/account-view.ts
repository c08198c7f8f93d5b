/** The account list with each account's live limits and ban-risk signals (read from its AccountDO), for GET /accounts and GET /usage. */
import type { z } from 'zod'
import type { Account } from '../../schema/api/accounts'
import { accountStub } from '../lib/objects'
import { tenantAndAccounts } from '../db/accounts'
import type { Db } from '../db/client'
import type { Tenant } from '../db/tenants'
import { isoOrNull } from '../lib/time'

/** The wire account; this view always fills its `risk` (an extension, optional in the schema). */
export type WireAccount = z.infer<typeof Account> & { risk: NonNullable<z.infer<typeof Account>['risk']> }

/**
 * The tenant (read fresh, not from the auth cache: usage must show a suspension at once) and its accounts with
 * their limits. `fallback` is the authenticated tenant, used only if the row vanished meanwhile.
 */
export async function accountsWithLimits(env: Env, db: Db, fallback: Tenant): Promise<{ tenant: Tenant; accounts: WireAccount[] }> {
  const fresh = await tenantAndAccounts(db, fallback.id)
  const tenant = fresh.tenant ?? fallback
  const accounts = await Promise.all(
    fresh.accounts.map(async (a) => {
      // Limits and ban-risk signals (issue 25) in one call: the object's view of the account.
      const { limits, risk } = await accountStub(env, tenant.id, a.id).standing({ tenantId: tenant.id, accountId: a.id, channel: a.channel }, tenant.plan)
      return {
        id: a.id,
        channel: a.channel,
        identifier: a.identifier,
        status: a.status,
        status_reason: a.statusReason,
        connected_at: isoOrNull(a.connectedAt),
        limits,
        risk,
      }
    })
  )
  return { tenant, accounts }
}
