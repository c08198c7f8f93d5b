/** The audit-log tool (docs/agent-safety.md): what the tenant's keys did, newest first. */
import { AuditQuery } from '../../../schema/api/audit'
import { READS, toolInput, type ToolSpec } from '../../lib/tool-spec'

export const auditTools: ToolSpec[] = [
  {
    name: 'list_audit',
    title: 'List the audit log',
    description:
      'Lists what the API keys did, newest first: every change and every call refused for the key, with key, tool or route, account, contact and outcome (accepted, refused, approved, rejected); filter by key_id, account_id or outcome and pass next_cursor as before for the next page.',
    input: toolInput({ query: AuditQuery }),
    method: 'GET',
    path: '/audit',
    hints: READS,
  },
]
