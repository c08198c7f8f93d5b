/**
 * The page inbox's MCP tools (spec 4.6 and 4.9): which of its REST operations in routes.ts are tools, by
 * operationId, with the hints MCP adds. Name, text, method, path and schemas are the routes' own (lib/tool-spec.ts).
 */
import { ACTS, READS, REMOVES, type ToolRow } from '../../lib/tool-spec'

export const socialTools: readonly ToolRow[] = [
  { name: 'set_social_app', hints: { ...REMOVES, openWorldHint: false } },
  { name: 'connect_social_inbox', hints: ACTS },
  { name: 'get_social_inbox_status', hints: READS },
  { name: 'list_pages', hints: READS },
  { name: 'select_page', hints: { ...ACTS, idempotentHint: true } },
  { name: 'disconnect_social_inbox', hints: REMOVES },
]
