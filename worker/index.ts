/** The Worker entry: the Hono app serves every request; the Durable Object classes are exported for their bindings. */
import { app } from './app'

export { AccountDO } from './account/account-do'
export { RelayHubDO } from './relay/hub-do'

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>
