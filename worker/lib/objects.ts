/**
 * Typed stubs of the two Durable Objects. Callers import these instead of the classes' modules so that asking an
 * object for something never pulls the object's own code (and its imports) into the caller's folder: only types
 * cross, which keeps worker/ free of import cycles.
 */
import type { AccountObject } from '../account/account-do'
import type { RelayHubDO } from '../relay/hub-do'

/** The AccountDO of one account of one tenant (named `${tenantId}/${accountId}`, so every send of an account is serialized there). */
export function accountStub(env: Env, tenantId: string, accountId: string): DurableObjectStub<AccountObject> {
  return env.ACCOUNT.getByName(`${tenantId}/${accountId}`)
}

/** The relay hub: one object for the whole service. */
export function relayHub(env: Env): DurableObjectStub<RelayHubDO> {
  return env.RELAY_HUB.getByName('global')
}
