/**
 * The SMS channel's MCP tools (spec 4.5 and 4.9): which of its REST operations in routes.ts are tools, by
 * operationId, with the hints MCP adds. Name, text, method, path and schemas are the routes' own (lib/tool-spec.ts).
 */
import { ACTS, READS_UPSTREAM, REMOVES, type ToolRow } from '../../lib/tool-spec'

export const smsTools: readonly ToolRow[] = [
  // Replaces whatever incoming-SMS webhook the number had at the provider.
  { name: 'connect_sms', hints: { ...ACTS, destructiveHint: true, idempotentHint: true } },
  { name: 'connect_android_sms', hints: { ...ACTS, idempotentHint: true } },
  { name: 'get_sms_status', hints: READS_UPSTREAM },
  { name: 'get_android_sms_status', hints: READS_UPSTREAM },
  { name: 'disconnect_sms', hints: REMOVES },
]
