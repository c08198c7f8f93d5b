/**
 * The one tool table of the MCP server (spec 4.9 and the channel tools of 4.3 to 4.7): every tool is one REST
 * operation. The rows live beside their resource (tools/ here, each channel's tools.ts, planned.ts for channels not
 * built yet); this module joins them and renders tools/list.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import { inputJsonSchema } from './json-schema'
import type { ToolSpec } from '../lib/tool-spec'
import { PLANNED_TOOLS } from '../channels/planned'
import { CHANNELS } from '../channels/registry'
import { messagingTools } from './tools/messaging'
import { webhookTools } from './tools/webhooks'

export const TOOLS: readonly ToolSpec[] = [
  ...messagingTools,
  ...CHANNELS.flatMap((c) => c.tools),
  ...PLANNED_TOOLS,
  ...webhookTools,
]

const byName = new Map(TOOLS.map((t) => [t.name, t]))

export function toolNamed(name: string): ToolSpec | undefined {
  return byName.get(name)
}

let definitions: Tool[] | undefined

/** The tools/list answer; the table is static, so it is rendered once per isolate. */
export function toolDefinitions(): Tool[] {
  definitions ??= TOOLS.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: inputJsonSchema(t.input),
    annotations: { title: t.title, ...t.hints },
  }))
  return definitions
}
