/** The custom channel (spec 4.7) as a Channel: the user's own bridge, reached by webhook both ways. */
import type { Channel } from '../contract'
import { deliverCustom } from './outbound'
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
}
