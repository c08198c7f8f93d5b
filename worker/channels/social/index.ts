/**
 * The page-inbox channel (spec 4.6, 8): one `social` account per page, reached at /v1/channels/meta. People are
 * addressed by their page- or Instagram-scoped id (`to.social_id`) and only after they wrote; replies go out
 * within 24 hours of their last message on the surface they wrote on. Delivery is direct (Send API), no relay.
 */
import type { Channel } from '../contract'
import { actSocial, deliverSocial } from './outbound'
import { socialPublicRoutes } from './public-routes'
import { socialRoutes } from './routes'
import { socialTools } from './tools'
import { checkWindow } from './window'

export const socialChannel: Channel = {
  id: 'social',
  path: 'meta',
  title: 'page inbox',
  routes: socialRoutes,
  publicRoutes: socialPublicRoutes,
  tools: socialTools,
  address: 'social',
  strangers: { allowed: false, status: 409, code: 'needs_inbound_first', message: 'On the page inbox only people who wrote to the page can be messaged' },
  warmUp: false,
  transport: 'direct',
  async checkSend({ contact, now }) {
    // A contact the account knows but who never wrote (imported, say) is refused like a stranger.
    checkWindow(contact.hasInbound ? contact.lastInboundAt : null, now)
  },
  deliver: (c, ref, row) => deliverSocial(c, ref, row),
  // Page Messages: `reply_to`, `sender_action` react/unreact, typing_on, mark_seen; Graph has no number lookup.
  actions: { reply: true, react: true, typing: true, read: true, lookup: false },
  act: (c, ref, action) => actSocial(c, ref, action),
}
