/** The custom channel (spec 4.7) as a Channel: the user's own bridge, reached by webhook both ways. */
import type { Channel } from '../contract'
import { actCustom, deliverCustom } from './outbound'
import { customChannelRoutes } from './routes'
import { customChannelTools } from './tools'

export const customChannel: Channel = {
  id: 'custom',
  path: 'custom',
  title: 'custom channel',
  routes: customChannelRoutes,
  tools: customChannelTools,
  address: 'external',
  strangers: { allowed: true },
  warmUp: false,
  transport: 'direct',
  deliver: deliverCustom,
  // Passed to the bridge: quotes always (`replyTo` on the message), the rest once it opted in (`actions: true`).
  actions: { reply: true, react: true, typing: true, read: true, lookup: false },
  act: actCustom,
}
