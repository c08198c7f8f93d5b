/**
 * Typed stubs of the Durable Objects. Callers ask for a stub here instead of importing the classes: the
 * bindings' generated types (worker-configuration.d.ts, `DurableObjectNamespace<AccountDO>`) give the stub its RPC
 * methods, so no caller's folder depends on an object's code, not even for a type.
 */

export type AccountStub = ReturnType<Env['ACCOUNT']['getByName']>
export type RelayHubStub = ReturnType<Env['RELAY_HUB']['getByName']>
export type TenantMoveStub = ReturnType<Env['TENANT_MOVE']['getByName']>

/** The AccountDO of one account of one tenant (named `${tenantId}/${accountId}`, so every send of an account is serialized there). */
export function accountStub(env: Env, tenantId: string, accountId: string): AccountStub {
  return env.ACCOUNT.getByName(`${tenantId}/${accountId}`)
}

/** The object that runs a tenant's moves between shards (worker/shards/move-do.ts), one per tenant. */
export function tenantMover(env: Env, tenantId: string): TenantMoveStub {
  return env.TENANT_MOVE.getByName(tenantId)
}

/** The relay hub: one object for the whole service. */
export function relayHub(env: Env): RelayHubStub {
  return env.RELAY_HUB.getByName('global')
}
