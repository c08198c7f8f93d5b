/** Whether a key may call an MCP tool: the decision of the REST operation the tool runs (scopes.ts). */
import type { ToolSpec } from '../lib/tool-spec'
import type { KeyGrant } from './grant'
import { grantRefusal, scopeRuleFor } from './scopes'

export function toolAllowed(tool: Pick<ToolSpec, 'method' | 'path'>, grant: KeyGrant): boolean {
  return grantRefusal(grant, scopeRuleFor(tool.method, tool.path), `${tool.method} ${tool.path}`) === null
}
