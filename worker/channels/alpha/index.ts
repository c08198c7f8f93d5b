/**
 * alpha (spec 4.3) as a Channel: a linked device run by a relay (relay/alpha, Baileys). Its inbound messages,
 * receipts and session state arrive as relay frames (worker/relay → account/session/), and the account's session
 * hands its outbound messages to the relay.
 */
import type { Channel } from '../contract'
import { connectPageRoutes } from './connect-page'
import { alphaRoutes } from './routes'
import { alphaTools } from './tools'

export const alphaChannel: Channel = {
  id: 'alpha_web',
  path: 'alpha-web',
  title: 'alpha',
  routes: alphaRoutes,
  publicRoutes: connectPageRoutes,
  tools: alphaTools,
  address: 'phone',
  strangers: { allowed: true },
  warmUp: true,
  // alpha's 463 forbids starting chats, not replying; the relay refuses what the restriction really blocks (a ban).
  repliesWhileRestricted: (reason) => reason === 'blocked_by_alpha',
  transport: 'relay',
  // Baileys: `quoted`, `react`, presence `composing`, `readMessages`, `onWhatsApp` (relay/alpha/actions.ts).
  actions: { reply: true, react: true, typing: true, read: true, lookup: true },
}
