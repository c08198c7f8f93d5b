/** The Worker entry: the Hono app serves every request, the cron runs the webhook sweeper, media retention, the agent-safety sweep and the idempotency-key prune; the Durable Object classes are exported for their bindings. */
import { AccountObject } from './account/account-do'
import { app } from './app'
import { mediaConfig } from './config'
import { channelRuntime } from './channels/registry'
import { database } from './db/client'
import { pruneIdempotencyKeys } from './db/idempotency'
import { sweepExpiredMedia } from './media/retention'
import { sweepSafety } from './safety/sweep'
import { sweepWebhooks } from './webhooks/sweeper'

export { RelayHubDO } from './relay/hub-do'

/** The AccountDO binding: the account rules with the registered channels handed in (they sit above account/). */
export class AccountDO extends AccountObject {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, channelRuntime)
  }
}

export default {
  fetch: app.fetch,
  async scheduled(controller, env) {
    const report = await sweepWebhooks(env, database(env.DB), controller.scheduledTime)
    if (report.kicked + report.prunedDeliveries + report.prunedEvents > 0) console.log(JSON.stringify({ msg: 'webhook sweep', ...report }))
    // Media retention rides the same minute cron: one indexed D1 read when nothing is due, nothing per account.
    const expired = await sweepExpiredMedia(env.MEDIA, database(env.DB), mediaConfig(env).retentionMs, controller.scheduledTime)
    if (expired > 0) console.log(JSON.stringify({ msg: 'media retention', deleted: expired }))
    const safety = await sweepSafety(env, database(env.DB), controller.scheduledTime)
    if (safety.expiredApprovals + safety.prunedAudit > 0) console.log(JSON.stringify({ msg: 'safety sweep', ...safety }))
    // Idempotency keys live 24 h: one indexed delete of the expired ones.
    const idempotency = await pruneIdempotencyKeys(database(env.DB), controller.scheduledTime)
    if (idempotency > 0) console.log(JSON.stringify({ msg: 'idempotency keys pruned', deleted: idempotency }))
  },
} satisfies ExportedHandler<Env>
