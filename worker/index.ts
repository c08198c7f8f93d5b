/** The Worker entry: the Hono app serves every request, the cron runs the webhook and agent-safety sweeps; the Durable Object classes are exported for their bindings. */
import { AccountObject } from './account/account-do'
import { app } from './app'
import { channelRuntime } from './channels/registry'
import { database } from './db/client'
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
    const safety = await sweepSafety(env, database(env.DB), controller.scheduledTime)
    if (safety.expiredApprovals + safety.prunedAudit > 0) console.log(JSON.stringify({ msg: 'safety sweep', ...safety }))
  },
} satisfies ExportedHandler<Env>
