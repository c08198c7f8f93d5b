/**
 * POST /v1/messages/{id}/approve and /reject: the owner decides a send held as `awaiting_approval`
 * (docs/agent-safety.md). Needs a full key. Approval runs every limit now; a limit hit fails the message and
 * answers that limit's refusal, as the send itself would have.
 */
import { createRoute } from '@hono/zod-openapi'
import { MessagingError } from '../../schema/api/common'
import { Message, MessageIdParam } from '../../schema/api/messages'
import { database } from '../db/client'
import { checkAccount, noteAudit } from '../middleware/key-scope'
import { decide } from '../safety/approvals'
import { toWireMessage } from '../db/wire'
import { resourceApp } from '../validate'
import { getMessage } from '../db/messages'
import { ApiError } from '../errors'

export const messageApprovalRoutes = resourceApp()

const json = (description: string) => ({ description, content: { 'application/json': { schema: MessagingError } } })

for (const decision of ['approve', 'reject'] as const) {
  messageApprovalRoutes.openapi(
    createRoute({
      method: 'post',
      path: `/{id}/${decision}`,
      tags: ['Messages'],
      summary: decision === 'approve' ? 'Approve a held message' : 'Reject a held message',
      description:
        decision === 'approve'
          ? 'Sends a message held as `awaiting_approval` (an extension of the message statuses). Every limit runs at this moment: a limit hit fails the message with its code and answers that refusal (e.g. 429 `daily_send_cap`). Answers the message, now `queued`. Needs a full key.'
          : 'Fails a message held as `awaiting_approval` with the reason `approval_rejected`; it is never sent. Needs a full key.',
      request: { params: MessageIdParam },
      responses: {
        200: { description: 'The message after the decision', content: { 'application/json': { schema: Message } } },
        400: json('Invalid message id'),
        401: json('Missing or invalid API key'),
        403: json('`key_scope` (needs a full key without approval of its own), `key_account`, or a send refusal at approval time'),
        404: json('`message_not_found`'),
        409: json('`not_awaiting_approval` (decided already, or never held) or `approval_expired`'),
        429: json('A limit refused the approved message (`daily_send_cap`, `new_contact_cap`, `loop_guard`, `opener_burst`); the message failed'),
      },
    }),
    async (c) => {
      const db = database(c.env.DB)
      const tenantId = c.get('tenant').id
      const { id } = c.req.valid('param')
      // An agent's key that holds its first messages must not release them itself.
      if (c.get('key').approval)
        throw new ApiError(403, 'key_scope', 'A key whose first messages wait for approval cannot decide them; a full key without approval may')
      const held = await getMessage(db, tenantId, id)
      if (!held) throw new ApiError(404, 'message_not_found', 'No such message on this API key')
      checkAccount(c.get('key'), held.message.accountId)
      noteAudit(c, { accountId: held.message.accountId, contactId: held.message.contactId, messageId: id })
      const { message } = await decide(c.env, db, tenantId, id, decision, Date.now())
      noteAudit(c, { outcome: decision === 'approve' ? 'approved' : 'rejected' })
      return c.json(toWireMessage(message), 200)
    }
  )
}
