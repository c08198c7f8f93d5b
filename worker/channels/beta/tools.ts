/**
 * beta's MCP tools (spec 4.4 and 4.9): which of its REST operations in routes.ts are tools, by operationId, with the
 * hints MCP adds. Name, text, method, path and schemas are the routes' own (lib/tool-spec.ts `routeTools`).
 */
import { ACTS, READS_UPSTREAM, REMOVES, type ToolRow } from '../../lib/tool-spec'

export const betaTools: readonly ToolRow[] = [
  // force_new discards the existing session.
  { name: 'connect_beta', hints: { ...ACTS, destructiveHint: true } },
  { name: 'submit_beta_code', hints: ACTS },
  { name: 'submit_beta_password', hints: ACTS },
  { name: 'get_beta_status', hints: READS_UPSTREAM },
  { name: 'disconnect_beta', hints: REMOVES },
]
