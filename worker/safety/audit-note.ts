/**
 * The audit log's retention, and the note a route tells the audit middleware about the action it handled (never a
 * message text). The note is declared in env.ts: a request carries it, and that layer is below this one.
 */
import type { AuditNote } from '../env'

export type { AuditNote }

/** Days the audit log keeps an entry. */
export const AUDIT_RETENTION_DAYS = 90
export const AUDIT_RETENTION_MS = AUDIT_RETENTION_DAYS * 86_400_000
