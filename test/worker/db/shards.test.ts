/**
 * The shard bindings (worker/db/shards.ts): DB_SHARD_0 up to the first number not bound, scanned once per environment
 * object (every request asks for its tenant's shard), each environment read on its own.
 */
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { shardBinding, shardBindings, shardCount, ShardMissing } from '../../../worker/db/shards'

/** An environment of the same type as the real one with other shard bindings (a different configuration). */
function configured(extra: Record<string, unknown>): Env {
  const { DB_SHARD_0: _first, DB_SHARD_1: _second, ...rest } = env
  return Object.assign(Object.create(null), rest, extra)
}

describe('shardBindings', () => {
  it('lists DB_SHARD_0 up to the first number not bound, in order', () => {
    expect(shardBindings(env)).toEqual([env.DB_SHARD_0, env.DB_SHARD_1])
    expect(shardCount(env)).toBe(2)
    expect(shardBinding(env, 1)).toBe(env.DB_SHARD_1)
    expect(() => shardBinding(env, 2)).toThrow(ShardMissing)
  })

  it('answers the same list for every call on one environment (scanned once)', () => {
    expect(shardBindings(env)).toBe(shardBindings(env))
  })

  it('reads each environment object on its own: one without shard bindings has the directory alone', () => {
    expect(shardBindings(configured({}))).toEqual([env.DB])
    expect(shardBindings(configured({ DB_SHARD_0: env.DB, DB_SHARD_2: env.DB_SHARD_1 }))).toEqual([env.DB])
    expect(shardBindings(configured({ DB_SHARD_0: env.DB, DB_SHARD_1: env.DB_SHARD_1 }))).toEqual([env.DB, env.DB_SHARD_1])
  })
})
