/** The audit-log tool (docs/agent-safety.md): what the tenant's keys did, newest first; read off routes/audit.ts. */
import { READS, routeTools } from '../../lib/tool-spec'
import { auditRoutes } from '../../routes/audit'

export const auditTools = routeTools(auditRoutes, '/audit', [{ name: 'list_audit', hints: READS }])
