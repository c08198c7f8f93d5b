/**
 * How full each shard is (docs/CAPACITY.md, "When a database fills"): its size as D1 reports it in every answer
 * (`meta.size_after`), measured against SHARD_CAPACITY_BYTES, with the tenants the directory places on it. A shard
 * past SHARD_WARN_RATIO raises the alarm in GET /admin/shards and /admin/metrics; past SHARD_FULL_RATIO it takes no
 * new tenant and no move, so it keeps room for the growth of the tenants already on it. The choice for a new tenant
 * compares whole percents of room, so placement does not flap on a few kilobytes and an even start fills shard 0 first.
 */
import { shardCapacityBytes } from '../config'
import { ApiError } from '../errors'
import { tenantsPerShard } from './placement'
import { directory, shardBindings } from './shards'

export const SHARD_WARN_RATIO = 0.8
export const SHARD_FULL_RATIO = 0.9

export type ShardLevel = 'ok' | 'warning' | 'full'

export type ShardStats = {
  shard: number
  /** null when the shard did not answer. */
  sizeBytes: number | null
  capacityBytes: number
  tenants: number
  level: ShardLevel | 'unreachable'
}

/** The database's size in bytes, from the meta of the cheapest statement there is. */
export async function databaseSize(d1: D1Database): Promise<number> {
  const result = await d1.prepare('SELECT 1').all()
  return result.meta.size_after
}

export function shardLevel(sizeBytes: number, capacityBytes: number): ShardLevel {
  const used = sizeBytes / capacityBytes
  return used >= SHARD_FULL_RATIO ? 'full' : used >= SHARD_WARN_RATIO ? 'warning' : 'ok'
}

export async function shardStats(env: Env): Promise<ShardStats[]> {
  const capacityBytes = shardCapacityBytes(env)
  const [sizes, counts] = await Promise.all([Promise.allSettled(shardBindings(env).map(databaseSize)), tenantsPerShard(directory(env))])
  return sizes.map((size, shard) => {
    const sizeBytes = size.status === 'fulfilled' ? size.value : null
    return {
      shard,
      sizeBytes,
      capacityBytes,
      tenants: counts.get(shard) ?? 0,
      level: sizeBytes === null ? 'unreachable' : shardLevel(sizeBytes, capacityBytes),
    }
  })
}

/** Whole percents of the capacity still free. */
function roomPercent(s: ShardStats): number {
  return s.sizeBytes === null ? -1 : Math.floor((100 * (s.capacityBytes - s.sizeBytes)) / s.capacityBytes)
}

/** The shard a new tenant goes to: the most room in whole percents, the lowest number on a tie; 507 when none has room. */
export function roomiest(stats: ShardStats[]): number {
  const open = stats.filter((s) => s.level === 'ok' || s.level === 'warning')
  const best = open.reduce<ShardStats | undefined>((a, s) => (a === undefined || roomPercent(s) > roomPercent(a) ? s : a), undefined)
  if (!best) throw new ApiError(507, 'shards_full', 'Every shard is past its refusal mark or unreachable: add a shard (docs/deploy.md, "More shards")')
  return best.shard
}

export async function roomiestShard(env: Env): Promise<number> {
  return roomiest(await shardStats(env))
}
