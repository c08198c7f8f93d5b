/**
 * The Worker entry: the Hono app serves every request, the cron runs the webhook sweeper, media retention, the
 * agent-safety sweep and the idempotency-key prune on every shard, and message retention over the directory's
 * tenants; the Durable Object classes are exported for their bindings.
 */
import { AccountObject } from './account/account-do'
import { app } from './app'
import { mediaConfig } from './config'
import { channelRuntime } from './channels/registry'
import type { Db } from './db/client'
import { shardStats } from './db/shard-stats'
import { shardCount, shardDb } from './db/shards'
import { pruneIdempotencyKeys } from './db/idempotency'
import { sweepExpiredMedia } from './media/retention'
import { sweepRetention } from './messaging/retention'
import { sweepSafety } from './messaging/safety-sweep'
import { sweepWebhooks } from './webhooks/sweeper'

export { RelayHubDO } from './relay/hub-do'
export { TenantMoveDO } from './shards/move-do'

/** The AccountDO binding: the account rules with the registered channels handed in (they sit above account/). */
export class AccountDO extends AccountObject {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, channelRuntime)
  }
}

/**
 * The minute cron's sweeps, each on its own and, for those over a shard's rows, once per shard: one that throws (D1
 * failing for a moment, a shard unreachable) is logged and keeps neither the other sweeps nor the other shards from
 * their work; the run still fails, so the platform's cron log shows it.
 */
const SHARD_SWEEPS: Array<{ name: string; run: (env: Env, db: Db, now: number) => Promise<Record<string, number>> }> = [
  { name: 'webhook sweep', run: (env, db, now) => sweepWebhooks(env, db, now) },
  // One indexed D1 read when nothing is due, nothing per account.
  { name: 'media retention', run: async (env, db, now) => ({ deleted: await sweepExpiredMedia(env.MEDIA, db, mediaConfig(env).retentionMs, now) }) },
  { name: 'safety sweep', run: (env, db, now) => sweepSafety(env, db, now) },
  // Idempotency keys live 24 h: one indexed delete of the expired ones (db/idempotency.ts).
  { name: 'idempotency keys pruned', run: async (_env, db, now) => ({ deleted: await pruneIdempotencyKeys(db, now) }) },
]

/** Sweeps that go by the directory and reach the shards themselves. */
const DIRECTORY_SWEEPS: Array<{ name: string; run: (env: Env, now: number) => Promise<Record<string, number>> }> = [
  // A few tenants per run, a bounded number of archive-then-delete steps (messaging/retention.ts).
  {
    name: 'message retention',
    run: async (env, now) => {
      const report = await sweepRetention(env, now)
      return report.deleted > 0 ? report : {}
    },
  },
  // docs/CAPACITY.md "When a database fills": a shard past 80 % of its capacity, full or silent is logged every run.
  {
    name: 'shard alarm',
    run: async (env) => {
      const levels = (await shardStats(env)).map((s) => s.level)
      return {
        warning: levels.filter((l) => l === 'warning').length,
        full: levels.filter((l) => l === 'full').length,
        unreachable: levels.filter((l) => l === 'unreachable').length,
      }
    },
  },
]

export default {
  fetch: app.fetch,
  async scheduled(controller, env) {
    const now = controller.scheduledTime
    const runs = [
      ...Array.from({ length: shardCount(env) }, (_, shard) =>
        SHARD_SWEEPS.map((sweep) => ({ name: sweep.name, shard, run: () => sweep.run(env, shardDb(env, shard), now) }))
      ).flat(),
      ...DIRECTORY_SWEEPS.map((sweep) => ({ name: sweep.name, shard: undefined, run: () => sweep.run(env, now) })),
    ]
    const failures: unknown[] = []
    for (const { name, shard, run } of runs) {
      try {
        const report = await run()
        if (Object.values(report).some((n) => n > 0)) console.log(JSON.stringify({ msg: name, shard, ...report }))
      } catch (err) {
        failures.push(err)
        console.error(JSON.stringify({ msg: `${name} failed`, shard, error: String(err) }))
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, `${failures.length} cron sweep(s) failed`)
  },
} satisfies ExportedHandler<Env>
