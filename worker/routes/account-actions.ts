/**
 * What an agent does with an account besides sending (issue 25, extensions): show it typing to a person for a few
 * seconds, and ask whether a number is on the account's network before writing to it. Typing counts against the
 * account's per-minute action limit; lookups against a lower one of their own and are cached for a day, since looking
 * numbers up in bulk is itself a ban signal (messaging/actions.ts, account/actions.ts).
 */
import { createRoute } from '@hono/zod-openapi'
import { z } from 'zod'
import { ActionDone, LookupQuery, LookupResult, TypingBody } from '../../schema/api/actions'
import { lookup, typing } from '../messaging/actions'
import { resourceApp } from '../validate'
import { ACTION_ERRORS } from './action-responses'
import { actionRequest } from './message-actions'

export const accountActionRoutes = resourceApp({ to: 'invalid_recipient', phone: 'invalid_phone' })

const AccountIdParam = z.object({
  accountId: z.string().min(1).max(64).meta({ description: 'The account id (the E.164 number for alpha, beta and SMS; `custom`; the page account’s id)' }),
})

accountActionRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/{accountId}/typing',
    operationId: 'send_typing',
    tags: ['Accounts'],
    summary: 'Show typing',
    description: [
      'Shows the account as typing to a person it has a chat with, for a few seconds (call again to keep it showing while you write). Counts towards a per-minute limit, not the daily send caps.',
      'alpha: presence `composing` (about 10 s); beta: SetTyping (about 5 s); page inbox: `typing_on` (about 20 s or until the next message); custom: an opted-in bridge gets `action: typing`. Checked like a send: a reply key only towards people within its window. At most 60 reactions, typing notices and read marks per account and minute (`rate_limited`). Channels that cannot answer 422 `unsupported_on_channel` (docs/api.md).',
    ].join('\n\n'),
    request: { params: AccountIdParam, body: { required: true, content: { 'application/json': { schema: TypingBody } } } },
    responses: { 200: { description: 'Shown', content: { 'application/json': { schema: ActionDone } } }, ...ACTION_ERRORS },
  }),
  async (c) => c.json(await typing(actionRequest(c), c.req.valid('param').accountId, c.req.valid('json').to), 200)
)

accountActionRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/{accountId}/lookup',
    operationId: 'lookup_number',
    tags: ['Accounts'],
    summary: 'Look a number up',
    description: [
      'Tells whether a phone number has an account on this account’s network before you write to it (alpha; beta only for numbers in the account’s address book). Rate-limited (60 a minute per account) and cached for a day; do not use it to sweep lists of numbers.',
      'alpha asks the network (`onWhatsApp`-style contact query). beta answers from the account’s synced address book only: a number outside it gives `on_network: null` with a `reason`, because importing a stranger’s number to test it is how beta flags accounts, so the gateway never does. At most 60 lookups per account and minute reach the network (`rate_limited`); answers are reused for 24 h (`cached: true`, free). SMS, the page inbox and the custom channel answer 422 `unsupported_on_channel`.',
    ].join('\n\n'),
    request: { params: AccountIdParam, query: LookupQuery },
    responses: { 200: { description: 'The answer', content: { 'application/json': { schema: LookupResult } } }, ...ACTION_ERRORS },
  }),
  async (c) => c.json(await lookup(actionRequest(c), c.req.valid('param').accountId, c.req.valid('query').phone), 200)
)
