/** GET /v1/accounts (spec 4.1): the tenant's accounts, connected or not, with today's limits. */
import { createRoute } from '@hono/zod-openapi'
import { AccountList } from '../../schema/api/accounts'
import { MessagingError } from '../../schema/api/common'
import { accountAllowed } from '../safety/grant'
import { accountsWithLimits } from '../messaging/account-view'
import { resourceApp } from '../validate'

export const accountsRoutes = resourceApp()

accountsRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/',
    operationId: 'list_accounts',
    tags: ['Accounts'],
    summary: 'List accounts',
    description: [
      "Call this first: lists the user's accounts (id, channel, status) with today's sends and new contacts against their caps. The id is the account_id other tools take.",
      'Every account added to this API key (connected or not) with its daily limits. `ramp_day` is null for channels without a warm-up ramp. `risk` (an extension) lists the ban-risk signals the network gave the account (docs/api.md, "Ban-risk signals"); while one is in force (beta’s `flood_wait` aside, which only delays sends) `new_contacts_cap` is 0 and sends to new people answer `account_at_risk`.',
    ].join('\n\n'),
    responses: {
      200: { description: 'The accounts', content: { 'application/json': { schema: AccountList } } },
      401: { description: 'Missing or invalid API key', content: { 'application/json': { schema: MessagingError } } },
      404: { description: 'The API is not enabled for this account', content: { 'application/json': { schema: MessagingError } } },
    },
  }),
  async (c) => {
    const { accounts } = await accountsWithLimits(c.env, c.var.db, c.get('tenant'))
    // A key limited to some accounts sees only those.
    const grant = c.get('key')
    return c.json({ accounts: accounts.filter((a) => accountAllowed(grant, a.id)) }, 200)
  }
)
