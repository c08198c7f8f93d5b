/** Whether a key may call an MCP tool: the scope decision of the REST operation the tool runs (scopes.ts). */
import type { ToolSpec } from '../lib/tool-spec'
import { scopeCovers, type KeyGrant } from './grant'
import { scopeRuleFor } from './scopes'

export function toolAllowed(tool: Pick<ToolSpec, 'method' | 'path'>, grant: KeyGrant): boolean {
  const rule = scopeRuleFor(tool.method, tool.path)
  return rule ? scopeCovers(grant.scope, rule.needs) : grant.scope === 'full'
}
