/**
 * Typed stubs of the two Durable Objects. Callers ask for a stub here instead of importing the classes: the
 * bindings' generated types (worker-configuration.d.ts, `DurableObjectNamespace<AccountDO>`) give the stub its RPC
 * methods, so no caller's folder depends on an object's code, not even for a type.
 */

export type AccountStub = ReturnType<Env['ACCOUNT']['getByName']>
export type RelayHubStub = ReturnType<Env['RELAY_HUB']['getByName']>

/** The AccountDO of one account of one tenant (named `${tenantId}/${accountId}`, so every send of an account is serialized there). */
export function accountStub(env: Env, tenantId: string, accountId: string): AccountStub {
  return env.ACCOUNT.getByName(`${tenantId}/${accountId}`)
}

/** The relay hub: one object for the whole service. */
export function relayHub(env: Env): RelayHubStub {
  return env.RELAY_HUB.getByName('global')
}
