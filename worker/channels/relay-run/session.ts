/**
 * A relay-run channel's session as its routes reach it in the Worker: starting it (the account listed as
 * `connecting` first, then its AccountDO asks the relay hub to run the session and, for a pairing code or beta's
 * first login step, waits briefly for the relay's answer) and reading its record, live from the relay when asked.
 */
import type { ConnectInput, ConnectOutcome, SessionStatus } from '../../account/session/lifecycle'
import { pairingCodeWaitMs } from '../../config'
import type { Db } from '../../db/client'
import type { Tenant } from '../../db/tenants'
import { accountStub } from '../../lib/objects'
import { ensureConnecting, relayRef, type RelayRun } from './account'

/** How long a status endpoint waits for the relay's live answer before it answers from the last report. */
export const STATUS_PROBE_TIMEOUT_MS = 1500

export type SessionStart = Pick<ConnectInput, 'linkMethod' | 'forceNew' | 'options' | 'passkeyLinking'>

/** Lists the account as `connecting` (within the plan's cap), then starts or restarts its session. */
export async function startSession(env: Env, db: Db, channel: RelayRun, tenant: Tenant, phone: string, start: SessionStart): Promise<ConnectOutcome> {
  await ensureConnecting(db, channel, tenant, phone)
  return accountStub(env, tenant.id, phone).connectSession({ ref: relayRef(channel, tenant.id, phone), phone, ...start, waitForCodeMs: pairingCodeWaitMs(env) })
}

/** The session's record as last reported, or (`live`) asked of the relay running it, for STATUS_PROBE_TIMEOUT_MS at most. */
export function sessionStatus(env: Env, tenantId: string, phone: string, live = false): Promise<SessionStatus> {
  return accountStub(env, tenantId, phone).sessionStatus(live ? STATUS_PROBE_TIMEOUT_MS : null)
}
