/**
 * The one list of channels. The app mounts their routes, the MCP tool table lists their tools, the send path reads
 * their addressing rules and the AccountDO delivers through them. Adding a channel is one line here (see
 * docs/ARCHITECTURE.md, "How to add a channel"); a channel not built yet is absent and answers from planned.ts.
 */
import { alphaChannel } from './alpha'
import type { Channel, ChannelId, ChannelRuntime } from './contract'
import { customChannel } from './custom'

export const CHANNELS: readonly Channel[] = [alphaChannel, customChannel]

const byId = new Map<ChannelId, Channel>(CHANNELS.map((c) => [c.id, c]))

export function findChannel(id: ChannelId): Channel | undefined {
  return byId.get(id)
}

/** No account can be added on a channel that is not built; should a stored one appear anyway, it cannot send. */
const UNBUILT: ChannelRuntime = {
  transport: 'direct',
  warmUp: false,
  deliver: async (_c, ref) => ({ ok: false, code: null, error: `sending on the ${ref.channel} channel is not available yet` }),
}

/** The AccountDO's view of the registry. */
export function channelRuntime(id: ChannelId): ChannelRuntime {
  return byId.get(id) ?? UNBUILT
}
