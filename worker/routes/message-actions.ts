/**
 * What an agent does to a message besides answering it (issue 25, extensions of spec 4.2): react to it (and take the
 * reaction back), and mark it read, which is never done on its own: only when the caller asks. Each is checked like a
 * send (the key's accounts, a reply key's window) and counts against the account's own per-minute limit, not its daily
 * send caps (messaging/actions.ts, account/actions.ts).
 */
import { createRoute } from '@hono/zod-openapi'
import { ActionDone, ReactionBody } from '../../schema/api/actions'
import { MessageIdParam } from '../../schema/api/messages'
import { createMiddleware } from 'hono/factory'
import { getMessage } from '../db/messages'
import { checkAccount } from '../safety/key-refusals'
import { markRead, react, type ActionRequest } from '../messaging/actions'
import { noteAudit } from '../middleware/key-scope'
import { resourceApp } from '../validate'
import type { Context } from 'hono'
import type { AppEnv } from '../env'
import { ACTION_ERRORS } from './action-responses'

export const messageActionRoutes = resourceApp({ emoji: 'invalid_emoji' })

/**
 * A key limited to some accounts is held to the message's account before the body is read, as every route that reads
 * an item is (a wrong body would otherwise answer 400 first). Other keys skip the read: the handler checks it too.
 */
const messageAccountFirst = createMiddleware<AppEnv>(async function messageAccountFirst(c, next) {
  const grant = c.get('key')
  if (grant.accounts !== null) {
    const row = await getMessage(c.var.db, c.get('tenant').id, c.req.param('id') ?? '')
    if (row) checkAccount(grant, row.message.accountId)
  }
  await next()
})

export function actionRequest(c: Context<AppEnv>): ActionRequest {
  return { env: c.env, db: c.var.db, tenantId: c.get('tenant').id, grant: c.get('key'), now: Date.now(), note: (n) => noteAudit(c, n) }
}

const done = { 200: { description: 'Done', content: { 'application/json': { schema: ActionDone } } }, ...ACTION_ERRORS }

const SUPPORT = 'Channels that cannot answer 422 `unsupported_on_channel` (docs/api.md, "Replies, reactions, typing and read marks").'

messageActionRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/{id}/reactions',
    operationId: 'react_to_message',
    tags: ['Messages'],
    summary: 'React to a message',
    description: [
      'Reacts to a message of a chat (one the person sent or one the account sent) with one emoji, replacing the account’s earlier reaction to it. Counts towards a per-minute limit, not the daily send caps.',
      `Sends the account's reaction to the message through its channel; the reaction then shows in the message's \`reactions\` as \`me\`. Checked like a send: a reply key only in chats within its window. At most 60 reactions, typing notices and read marks per account and minute (\`rate_limited\`). ${SUPPORT}`,
    ].join('\n\n'),
    middleware: [messageAccountFirst] as const,
    request: { params: MessageIdParam, body: { required: true, content: { 'application/json': { schema: ReactionBody } } } },
    responses: done,
  }),
  async (c) => c.json(await react(actionRequest(c), c.req.valid('param').id, c.req.valid('json').emoji), 200)
)

messageActionRoutes.openapi(
  createRoute({
    method: 'delete',
    path: '/{id}/reactions',
    operationId: 'remove_reaction',
    tags: ['Messages'],
    summary: 'Remove a reaction',
    description: [
      'Takes the account’s reaction to a message back.',
      `Removes the account's reaction through its channel (\`me\` leaves the message's \`reactions\`); counted like a reaction. ${SUPPORT}`,
    ].join('\n\n'),
    request: { params: MessageIdParam },
    responses: done,
  }),
  async (c) => c.json(await react(actionRequest(c), c.req.valid('param').id, null), 200)
)

messageActionRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/{id}/read',
    operationId: 'mark_read',
    tags: ['Messages'],
    summary: 'Mark a message read',
    description: [
      'Marks a received message (and the chat before it) as read, so the person sees it was read; the gateway never does this on its own. Counts towards a per-minute limit, not the daily send caps.',
      `Sends read marks up to this inbound message through its channel (alpha: readMessages; beta: ReadHistory; page inbox: mark_seen, the whole conversation; custom: an opted-in bridge gets \`action: read\`). The gateway never marks messages read by itself. ${SUPPORT}`,
    ].join('\n\n'),
    request: { params: MessageIdParam },
    responses: done,
  }),
  async (c) => c.json(await markRead(actionRequest(c), c.req.valid('param').id), 200)
)
