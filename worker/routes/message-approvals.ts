/**
 * POST /v1/messages/{id}/approve and /reject: the owner decides a send held as `awaiting_approval`
 * (docs/agent-safety.md). Needs the owner's key (full, every account, no approval, no expiry): approval means the
 * owner, so no agent key decides, whatever else it may do. Approval runs every limit now; a limit hit fails the message and
 * answers that limit's refusal, as the send itself would have.
 */
import { createRoute } from '@hono/zod-openapi'
import { MessagingError } from '../../schema/api/common'
import { Message, MessageIdParam } from '../../schema/api/messages'
import { noteAudit } from '../middleware/key-scope'
import { checkAccount } from '../safety/key-refusals'
import { decide } from '../messaging/approvals'
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
          ? 'Sends a message held as `awaiting_approval` (an extension of the message statuses). Every limit runs at this moment: a limit hit fails the message with its code and answers that refusal (e.g. 429 `daily_send_cap`). Answers the message, now `queued`. Needs the owner’s key (full, every account, no approval, no expiry).'
          : 'Fails a message held as `awaiting_approval` with the reason `approval_rejected`; it is never sent. Needs the owner’s key (full, every account, no approval, no expiry).',
      request: { params: MessageIdParam },
      responses: {
        200: { description: 'The message after the decision', content: { 'application/json': { schema: Message } } },
        400: json('Invalid message id'),
        401: json('Missing or invalid API key'),
        403: json('`key_scope` (needs the owner’s key: no agent key decides a held message), or a send refusal at approval time'),
        404: json('`message_not_found`'),
        409: json('`not_awaiting_approval` (decided already, or never held) or `approval_expired`'),
        429: json('A limit refused the approved message (`daily_send_cap`, `new_contact_cap`, `loop_guard`, `opener_burst`); the message failed'),
      },
    }),
    async (c) => {
      const db = c.var.db
      const tenantId = c.get('tenant').id
      const { id } = c.req.valid('param')
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
