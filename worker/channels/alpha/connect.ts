/**
 * Linking an alpha number (spec 4.3), shared by the REST connect call and the connect page's "new code" button: the
 * session starts like any relay-run channel's (channels/relay-run/: the account listed as `connecting` at once with
 * `ramp_day` 1, then its AccountDO asks the relay hub to run the session and, with a pairing code, waits briefly for
 * the relay to report the code).
 */
import type { ConnectOutcome } from '../../account/session/lifecycle'
import type { Db } from '../../db/client'
import type { Tenant } from '../../db/tenants'
import type { RelayRun } from '../relay-run/account'
import { startSession, type SessionStart } from '../relay-run/session'

/** alpha as the relay-run helpers name it (channels/relay-run/). */
export const ALPHA: RelayRun = { id: 'alpha_web', title: 'alpha' }

export type LinkRequest = Omit<SessionStart, 'passkeyLinking'> & { linkMethod: 'qr' | 'pairing_code' }

/** Starts (or restarts) the link; the tenant's alpha_passkey_linking goes with it to the relay (docs/channels/alpha.md). */
export function startLink(env: Env, db: Db, tenant: Tenant, phone: string, req: LinkRequest): Promise<ConnectOutcome> {
  return startSession(env, db, ALPHA, tenant, phone, { ...req, passkeyLinking: tenant.alphaPasskeyLinking })
}
