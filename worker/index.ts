/** The Worker entry: the Hono app serves every request; the AccountDO class is exported for its binding. */
import { app } from './app'

export { AccountDO } from './account/account-do'

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>
