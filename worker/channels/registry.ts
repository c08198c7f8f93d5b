/**
 * The one list of channels. The app mounts their routes, the MCP tool table lists their tools, the send path reads
 * their addressing rules and the AccountDO delivers through them. Adding a channel is one line here (see
 * docs/ARCHITECTURE.md, "How to add a channel"); a channel not built yet is absent and answers from planned.ts.
 */
import { alphaChannel } from './alpha'
import { betaChannel } from './beta'
import type { ChannelRuntime } from '../account/context'
import type { Channel, ChannelId, SendRules } from './contract'
import { customChannel } from './custom'
import { plannedSendRules } from './planned'
import { smsChannel } from './sms'
import { socialChannel } from './social'

export const CHANNELS: readonly Channel[] = [alphaChannel, betaChannel, smsChannel, socialChannel, customChannel]

const byId = new Map<ChannelId, Channel>(CHANNELS.map((c) => [c.id, c]))

/** Where a channel's routes are mounted under /v1 (its REST operations' paths and its tools' start with this). */
export function channelBase(channel: Channel): string {
  return `/channels/${channel.path}`
}

/** How a send on the channel resolves its recipient: the channel's own rules, or the spec's for a planned one. */
export function sendRulesFor(id: ChannelId): SendRules | undefined {
  return byId.get(id) ?? plannedSendRules(id)
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
