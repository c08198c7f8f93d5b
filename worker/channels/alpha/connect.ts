/**
 * Linking an alpha number (spec 4.3), shared by the REST connect call and the connect page's "new code" button:
 * the account is listed as `connecting` at once (plan account cap), then its AccountDO asks the relay hub to run
 * the session and, with a pairing code, waits briefly for the relay to report the code.
 */
import { addAccount, statusChange } from '../../account/lifecycle'
import type { ConnectOutcome } from '../../account/link/session'
import type { LinkOptions } from '../../account/link/state'
import { pairingCodeWaitMs } from '../../config'
import { getAccount, type AccountRow } from '../../db/accounts'
import type { Db } from '../../db/client'
import type { Tenant } from '../../db/tenants'
import { ApiError } from '../../errors'
import { accountStub } from '../../lib/objects'

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
  if (account?.channel !== 'alpha_web') throw new ApiError(404, 'connection_not_found', `No alpha connection for ${phone} on this API key`)
  return account
}

/** Adds the account (`connecting`, `ramp_day` 1) within the plan's cap, or moves an existing one back to `connecting`. */
export async function ensureConnecting(db: Db, tenant: Tenant, phone: string): Promise<void> {
  const now = Date.now()
  const { account } = await addAccount(db, tenant, { id: phone, channel: 'alpha_web', identifier: phone, status: 'connecting' }, now)
  const [first, ...rest] = statusChange(db, account, 'connecting', null, now).statements
  if (first) await db.batch([first, ...rest])
}

/** Starts (or restarts) the link; the tenant's alpha_passkey_linking goes with it to the relay (docs/channels/alpha.md). */
export async function startLink(env: Env, tenant: Pick<Tenant, 'id' | 'alphaPasskeyLinking'>, req: LinkRequest): Promise<ConnectOutcome> {
  return accountStub(env, tenant.id, req.phone).linkConnect({
    ref: alphaRef(tenant.id, req.phone),
    phone: req.phone,
    linkMethod: req.linkMethod,
    forceNew: req.forceNew,
    options: req.options,
    waitForCodeMs: pairingCodeWaitMs(env),
    passkeyLinking: tenant.alphaPasskeyLinking,
  })
}
