/**
 * The custom channel's MCP tools (spec 4.7 and 4.9): which of its REST operations in routes.ts are tools, by
 * operationId, with the hints MCP adds. Name, text, method, path and schemas are the routes' own (lib/tool-spec.ts).
 */
import { ACTS, READS, REMOVES, type ToolRow } from '../../lib/tool-spec'

export const customChannelTools: readonly ToolRow[] = [
  // Replaces the previous URL; setting the same URL again changes nothing.
  { name: 'set_custom_channel_webhook', hints: { ...REMOVES, openWorldHint: false } },
  { name: 'push_custom_channel_message', hints: { ...ACTS, openWorldHint: false } },
  { name: 'get_custom_channel_status', hints: READS },
  { name: 'disconnect_custom_channel', hints: { ...REMOVES, openWorldHint: false } },
]
