/**
 * The Worker entry: the Hono app serves every request, the cron runs the webhook sweeper, media retention, the
 * agent-safety sweep and message retention; the Durable Object classes are exported for their bindings.
 */
import { AccountObject } from './account/account-do'
import { app } from './app'
import { mediaConfig } from './config'
import { channelRuntime } from './channels/registry'
import { database, type Db } from './db/client'
import { sweepExpiredMedia } from './media/retention'
import { sweepRetention } from './messaging/retention'
import { sweepSafety } from './messaging/safety-sweep'
import { sweepWebhooks } from './webhooks/sweeper'

export { RelayHubDO } from './relay/hub-do'

/** The AccountDO binding: the account rules with the registered channels handed in (they sit above account/). */
export class AccountDO extends AccountObject {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, channelRuntime)
  }
}

/**
 * The minute cron's sweeps, each on its own: one that throws (D1 failing for a moment) is logged and does not keep
 * the others from their work; the run still fails, so the platform's cron log shows it.
 */
const SWEEPS: Array<{ name: string; run: (env: Env, db: Db, now: number) => Promise<Record<string, number>> }> = [
  { name: 'webhook sweep', run: (env, db, now) => sweepWebhooks(env, db, now) },
  // One indexed D1 read when nothing is due, nothing per account.
  { name: 'media retention', run: async (env, db, now) => ({ deleted: await sweepExpiredMedia(env.MEDIA, db, mediaConfig(env).retentionMs, now) }) },
  { name: 'safety sweep', run: (env, db, now) => sweepSafety(env, db, now) },
  // A few tenants per run, a bounded number of archive-then-delete steps (messaging/retention.ts).
  {
    name: 'message retention',
    run: async (env, db, now) => {
      const report = await sweepRetention(env.MEDIA, db, now)
      return report.deleted > 0 ? report : {}
    },
  },
]

export default {
  fetch: app.fetch,
  async scheduled(controller, env) {
    const db = database(env.DB)
    const failures: unknown[] = []
    for (const sweep of SWEEPS) {
      try {
        const report = await sweep.run(env, db, controller.scheduledTime)
        if (Object.values(report).some((n) => n > 0)) console.log(JSON.stringify({ msg: sweep.name, ...report }))
      } catch (err) {
        failures.push(err)
        console.error(JSON.stringify({ msg: `${sweep.name} failed`, error: String(err) }))
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, `${failures.length} cron sweep(s) failed`)
  },
} satisfies ExportedHandler<Env>
