/** The account list with each account's live limits (read from its AccountDO), for GET /accounts and GET /usage. */
import type { z } from 'zod'
import type { Account } from '../../schema/api/accounts'
import { accountStub } from '../account/account-do'
import { listAccounts } from '../db/accounts'
import type { Db } from '../db/client'
import type { Tenant } from '../db/tenants'
import { isoOrNull } from '../lib/time'

export type WireAccount = z.infer<typeof Account>

export async function accountsWithLimits(env: Env, db: Db, tenant: Tenant): Promise<WireAccount[]> {
  const rows = await listAccounts(db, tenant.id)
  return Promise.all(
    rows.map(async (a) => ({
      id: a.id,
      channel: a.channel,
      identifier: a.identifier,
      status: a.status,
      status_reason: a.statusReason,
      connected_at: isoOrNull(a.connectedAt),
      limits: await accountStub(env, tenant.id, a.id).limits({ tenantId: tenant.id, accountId: a.id, channel: a.channel }, tenant.plan),
    }))
  )
}
