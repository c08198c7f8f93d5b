/**
 * alpha's MCP tools (spec 4.3 and 4.9): which of its REST operations in routes.ts are tools, by operationId, with the
 * hints MCP adds. Name, text, method, path and schemas are the routes' own (lib/tool-spec.ts `routeTools`).
 */
import { ACTS, READS_UPSTREAM, REMOVES, type ToolRow } from '../../lib/tool-spec'

export const alphaTools: readonly ToolRow[] = [
  // force_new discards the existing session.
  { name: 'connect_alpha', hints: { ...ACTS, destructiveHint: true } },
  { name: 'get_alpha_qr', hints: READS_UPSTREAM },
  { name: 'get_alpha_status', hints: READS_UPSTREAM },
  { name: 'disconnect_alpha', hints: REMOVES },
]
