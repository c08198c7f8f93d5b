/**
 * The gateway's databases (docs/ARCHITECTURE.md, "The data tier"): the directory `DB` holds what is looked up across
 * tenants (tenants and where each lives, API keys, relays, page-inbox apps and connect flows), the shards
 * `DB_SHARD_0…N-1` hold the tenants' own rows. DB_SHARD_0 is bound to the directory's own database, so a gateway that
 * had one database keeps it as directory plus shard 0. A Drizzle handle is made once per binding and isolate.
 */
import { database, type Db } from './client'

export const SHARD_BINDING_PREFIX = 'DB_SHARD_'
/** The shard that is the directory's own database: its `tenants` and `api_keys` rows are the directory's. */
export const DIRECTORY_SHARD = 0

/** A shard the configuration does not bind (a tenant placed on a binding since removed, a bad admin request). */
export class ShardMissing extends Error {
  constructor(readonly shard: number) {
    super(`no D1 binding ${SHARD_BINDING_PREFIX}${shard} (wrangler.toml [[d1_databases]])`)
    this.name = 'ShardMissing'
  }
}

const handles = new WeakMap<D1Database, Db>()

function handle(d1: D1Database): Db {
  let db = handles.get(d1)
  if (!db) {
    db = database(d1)
    handles.set(d1, db)
  }
  return db
}

function isD1(value: unknown): value is D1Database {
  return typeof value === 'object' && value !== null && typeof Reflect.get(value, 'prepare') === 'function' && typeof Reflect.get(value, 'batch') === 'function'
}

/** The directory's Drizzle handle. */
export function directory(env: Env): Db {
  return handle(env.DB)
}

/** The scan of each environment object: its bindings are fixed for its life, and every request asks for a shard. */
const scanned = new WeakMap<Env, readonly D1Database[]>()

/**
 * The shard bindings in order, DB_SHARD_0 up to the first number not bound. A configuration that binds none (a
 * wrangler.toml from before shards) has one shard: the directory's database. Scanned once per environment object.
 */
export function shardBindings(env: Env): readonly D1Database[] {
  const known = scanned.get(env)
  if (known) return known
  const found: D1Database[] = []
  for (let i = 0; ; i++) {
    const binding: unknown = Reflect.get(env, `${SHARD_BINDING_PREFIX}${i}`)
    if (!isD1(binding)) break
    found.push(binding)
  }
  const bindings = Object.freeze(found.length > 0 ? found : [env.DB])
  scanned.set(env, bindings)
  return bindings
}

export function shardCount(env: Env): number {
  return shardBindings(env).length
}

/** The D1 binding of one shard. */
export function shardBinding(env: Env, shard: number): D1Database {
  const binding = shardBindings(env)[shard]
  if (!binding) throw new ShardMissing(shard)
  return binding
}

/** The Drizzle handle of one shard. */
export function shardDb(env: Env, shard: number): Db {
  return handle(shardBinding(env, shard))
}
