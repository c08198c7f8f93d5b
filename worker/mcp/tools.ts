/**
 * The one tool table of the MCP server (spec 4.9 and the channel tools of 4.3 to 4.7): every tool is one REST
 * operation, read off its route definition (lib/tool-spec.ts `routeTools`). The rows saying which operations are
 * tools live beside their resource (tools/ here, each channel's tools.ts, planned.ts for channels not built yet);
 * this module joins them and renders tools/list.
 */
import type { Tool } from '@modelcontextprotocol/server'
import { inputJsonSchema } from './json-schema'
import { routeTools, type ToolSpec } from '../lib/tool-spec'
import { PLANNED_TOOLS } from '../channels/planned'
import { CHANNELS, channelBase } from '../channels/registry'
import { isDefaultGrant, type KeyGrant } from '../safety/grant'
import { toolAllowed } from '../safety/tool-scope'
import { auditTools } from './tools/audit'
import { messagingTools } from './tools/messaging'
import { webhookTools } from './tools/webhooks'

export const TOOLS: readonly ToolSpec[] = [
  ...messagingTools,
  ...CHANNELS.flatMap((c) => routeTools(c.routes, channelBase(c), c.tools)),
  ...PLANNED_TOOLS,
  ...webhookTools,
  ...auditTools,
]

const byName = new Map(TOOLS.map((t) => [t.name, t]))

export function toolNamed(name: string): ToolSpec | undefined {
  return byName.get(name)
}

/** Tools beyond spec 4.9 that tools/list shows only to keys minted with a grant (docs/agent-safety.md). */
const SAFETY_TOOLS = new Set(auditTools.map((t) => t.name))

let definitions: Tool[] | undefined

/** Every tool; the table is static, so it is rendered once per isolate. */
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

/**
 * The tools/list answer for one key (docs/agent-safety.md): only the tools it may call, with send_message telling
 * a reply key whom it may reach and an approval key what happens to a first message. The owner's key sees the table.
 */
export function toolDefinitionsFor(grant: KeyGrant): Tool[] {
  const all = toolDefinitions()
  const plain = isDefaultGrant(grant)
  return all.flatMap((d, i) => {
    const tool = TOOLS[i]!
    // Today's keys keep today's list exactly (clients pin spec 4.9's table); list_audit still answers them.
    if (plain && SAFETY_TOOLS.has(tool.name)) return []
    if (!toolAllowed(tool, grant)) return []
    return tool.name === 'send_message' ? [{ ...d, description: sendDescriptionFor(grant) }] : [d]
  })
}

function sendDescriptionFor(grant: KeyGrant): string {
  const hours = Math.round((grant.replyWindowS / 3600) * 10) / 10
  const whom =
    grant.scope === 'reply'
      ? `Replies from one of the user’s accounts, but only to a person who wrote to that account in the last ${hours} h (this key is reply-only; address them by the contact id of their message), and check delivery with get_message.`
      : 'Queues a message from one of the user’s accounts to a person (address a reply by the contact id of their message); check delivery with get_message.'
  const then = grant.approval
    ? ' A message to someone who never wrote is held as awaiting_approval until the user approves it, and limits (50 sends, 10 new contacts a day, loop_guard) still apply.'
    : ' The service refuses beyond 50 sends and 10 new contacts per account per UTC day and after 3 messages to one person who has not replied (loop_guard).'
  return whom + then
}
