/**
 * Linking an alpha number (spec 4.3), shared by the REST connect call and the connect page's "new code" button:
 * the account is listed as `connecting` at once (plan account cap), then its AccountDO asks the relay hub to run
 * the session and, with a pairing code, waits briefly for the relay to report the code.
 */
import { accountStub } from '../../account/account-do'
import type { ConnectOutcome } from '../../account/link'
import type { LinkOptions } from '../../account/link-state'
import { pairingCodeWaitMs } from '../../config'
import { accountStatusUpdate, getAccount, insertAccountWithinCap, type AccountRow } from '../../db/accounts'
import type { Db } from '../../db/client'
import type { Tenant } from '../../db/tenants'
import { ApiError } from '../../errors'
import { planOf } from '../../plans'

export type LinkRequest = {
  phone: string
  linkMethod: 'qr' | 'pairing_code'
  forceNew: boolean
  options: LinkOptions
}

export const alphaRef = (tenantId: string, phone: string) => ({ tenantId, accountId: phone, channel: 'alpha_web' as const })

/** The tenant's alpha account for this number, or a 404 in the channel-connection error shape. */
export async function alphaAccount(db: Db, tenantId: string, phone: string): Promise<AccountRow> {
  const account = await getAccount(db, tenantId, phone)
  if (!account || account.channel !== 'alpha_web') throw new ApiError(404, 'connection_not_found', `No alpha connection for ${phone} on this API key`)
  return account
}

/** Adds the account (`connecting`, `ramp_day` 1) or moves an existing one back to `connecting`. */
export async function ensureConnecting(db: Db, tenant: Tenant, phone: string, existing: AccountRow | undefined): Promise<void> {
  const now = Date.now()
  if (!existing) {
    const cap = planOf(tenant.plan).accountsCap
    const added = await insertAccountWithinCap(
      db,
      { tenantId: tenant.id, id: phone, channel: 'alpha_web', identifier: phone, status: 'connecting', connectedAt: null, now },
      cap
    )
    if (!added) {
      // Lost a race with a concurrent connect of the same number: that one created it.
      if ((await getAccount(db, tenant.id, phone))?.channel === 'alpha_web') return
      throw new ApiError(409, 'account_cap_reached', `Your plan allows ${cap} connected account${cap === 1 ? '' : 's'}; disconnect one first`)
    }
    return
  }
  if (existing.channel !== 'alpha_web') throw new ApiError(409, 'account_exists', `${phone} is already an account on the ${existing.channel} channel`)
  if (existing.status !== 'connecting') await accountStatusUpdate(db, tenant.id, phone, { status: 'connecting', reason: null, now })
}

export async function startLink(env: Env, tenantId: string, req: LinkRequest): Promise<ConnectOutcome> {
  return accountStub(env, tenantId, req.phone).linkConnect({
    ref: alphaRef(tenantId, req.phone),
    phone: req.phone,
    linkMethod: req.linkMethod,
    forceNew: req.forceNew,
    options: req.options,
    waitForCodeMs: pairingCodeWaitMs(env),
  })
}
