/**
 * Channels whose issue has not landed yet: their REST operations and MCP tools, answered from this one place with
 * 501 `not_implemented` in the channel family's error shape, and the spec's send rules for accounts stored on them.
 * Every channel of the spec is built now, so the list is empty; a new channel can be announced here (its tools
 * listed with their final arguments) before its folder lands, and its entry goes when it is added to registry.ts.
 */
import { Hono } from 'hono'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import type { HttpMethod, ToolSpec } from '../lib/tool-spec'
import type { ChannelId, SendRules } from './contract'

/** A planned channel: its tools, and the send rules of the spec that already hold for accounts stored on it. */
type PlannedChannel = { id: ChannelId; title: string; tools: ToolSpec[]; rules: SendRules }

const PLANNED: readonly PlannedChannel[] = []

const NOT_BUILT = '(Not available yet on this server: every call answers HTTP 501) '

/** The planned channels' tools, listed so agents see the final vocabulary, each saying it is not built yet. */
export const PLANNED_TOOLS: readonly ToolSpec[] = PLANNED.flatMap((p) => p.tools.map((t) => ({ ...t, description: `${NOT_BUILT}${t.description}` })))

/** Method and Hono path (relative to /v1) of every planned operation, with what is missing, in the spec's order. */
export const NOT_IMPLEMENTED: readonly (readonly [HttpMethod, string, string])[] = PLANNED.flatMap((p) =>
  p.tools.map((t) => [t.method, t.path.replace(/\{(\w+)\}/g, ':$1'), p.title] as const)
)

/** The send rules of a planned channel (spec 4.2, 7), for accounts stored on it before its folder lands. */
export function plannedSendRules(id: ChannelId): SendRules | undefined {
  return PLANNED.find((p) => p.id === id)?.rules
}

/** Mounted under /v1 after every real route, so a real route always wins. */
export const plannedRoutes = new Hono<AppEnv>()

for (const [method, path, what] of NOT_IMPLEMENTED) {
  plannedRoutes.on(method, path, () => {
    throw new ApiError(501, 'not_implemented', `${what} is not available yet`)
  })
}
