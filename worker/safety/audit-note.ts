/** What a route tells the audit middleware about the action it handled; never a message text. */
import type { AuditOutcome } from '../../schema/d1'

export type AuditNote = {
  /** The route template the scope check matched (`POST /v1/messages/{id}/approve`). */
  route?: string
  accountId?: string | null
  contactId?: string | null
  messageId?: string | null
  /** Overrides `accepted` for a success: `approved` or `rejected`. */
  outcome?: AuditOutcome
  /** A note on a success, such as `awaiting_approval` for a held send. */
  code?: string
}

/** Days the audit log keeps an entry. */
export const AUDIT_RETENTION_DAYS = 90
export const AUDIT_RETENTION_MS = AUDIT_RETENTION_DAYS * 86_400_000
