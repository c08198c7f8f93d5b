/**
 * beta (spec 4.4) as a Channel: the user's own account, logged in by code (+ two-step password) or QR and run by a
 * relay (relay/beta, GramJS). Inbound, receipts (`read` only: beta has no per-message delivered receipt) and
 * session state arrive as relay frames, and the account's session (account/session/) hands outbound messages to the
 * relay. Only existing contacts (the address book synced on connect, or people who wrote) can be messaged.
 */
import type { Channel } from '../contract'
import { betaPageRoutes } from './connect-page'
import { betaRoutes } from './routes'
import { betaTools } from './tools'

export const betaChannel: Channel = {
  id: 'beta',
  path: 'beta',
  title: 'beta',
  routes: betaRoutes,
  publicRoutes: betaPageRoutes,
  tools: betaTools,
  address: 'phone',
  strangers: {
    allowed: false,
    status: 422,
    code: 'beta_requires_existing_contact',
    message: 'On beta only existing contacts can be messaged (the address book, or people who wrote)',
  },
  warmUp: false,
  // PEER_FLOOD limits the account to mutual contacts: replies still go to the relay, which beta judges one by one.
  repliesWhileRestricted: (reason) => reason === 'stranger_flag',
  transport: 'relay',
  // GramJS: `replyTo`, messages.SendReaction, SetTyping, ReadHistory; lookups answer from the address book only
  // (importing a stranger's number to test it is how beta flags accounts), relay/beta/actions.ts.
  actions: { reply: true, react: true, typing: true, read: true, lookup: true },
}
