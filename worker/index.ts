/** The Worker entry: the Hono app serves every request, the cron runs the webhook and agent-safety sweeps; the Durable Object classes are exported for their bindings. */
import { app } from './app'
import { database } from './db/client'
import { sweepSafety } from './safety/sweep'
import { sweepWebhooks } from './webhooks/sweeper'

export { AccountDO } from './account/account-do'
export { RelayHubDO } from './relay/hub-do'

export default {
  fetch: app.fetch,
  async scheduled(controller, env) {
    const report = await sweepWebhooks(env, database(env.DB), controller.scheduledTime)
    if (report.kicked + report.prunedDeliveries + report.prunedEvents > 0) console.log(JSON.stringify({ msg: 'webhook sweep', ...report }))
    const safety = await sweepSafety(env, database(env.DB), controller.scheduledTime)
    if (safety.expiredApprovals + safety.prunedAudit > 0) console.log(JSON.stringify({ msg: 'safety sweep', ...safety }))
  },
} satisfies ExportedHandler<Env>
