/** The audit log (docs/agent-safety.md): what each key did, newest first. Never holds a message text. */
import { z } from 'zod'
import { AUDIT_OUTCOMES } from '../d1'
import { DateTime, queryInt } from './common'

export const AuditQuery = z.object({
  limit: queryInt(1, 100).default(50).meta({ description: '1 to 100, default 50' }),
  before: z.string().min(1).max(100).optional().meta({ description: 'The previous answer’s next_cursor' }),
  key_id: z.string().min(1).max(64).optional(),
  account_id: z.string().min(1).max(64).optional(),
  outcome: z.enum(AUDIT_OUTCOMES).optional(),
})

export const AuditEntry = z
  .object({
    id: z.string(),
    key_id: z.string().nullable().meta({
      description: 'The key that acted; a decision on the hosted approval page and an approval expiry are recorded under the key that held the message',
    }),
    key_label: z.string().nullable(),
    action: z.string().meta({ description: 'The MCP tool, or the REST route (`POST /v1/messages`), or `approval page`' }),
    route: z.string(),
    account_id: z.string().nullable(),
    contact_id: z.string().nullable(),
    message_id: z.string().nullable(),
    outcome: z.enum(AUDIT_OUTCOMES),
    code: z.string().nullable().meta({ description: 'Refused: the error_code (or the HTTP status). Accepted: a note such as awaiting_approval' }),
    status: z.number().int().meta({ description: 'The HTTP status of the answer' }),
    created_at: DateTime,
  })
  .meta({ id: 'AuditEntry' })

export const AuditPage = z.object({ entries: z.array(AuditEntry), next_cursor: z.string().nullable() }).meta({ id: 'AuditPage' })
