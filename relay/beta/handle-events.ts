/**
 * The one switch over beta's single updates (catch-up.ts hands them over in order, from pushed containers and from
 * the difference alike): private incoming messages become inbound (with their photo or document as an attachment),
 * read-outbox updates become read receipts, a login token update finishes a QR login, address-book changes start a
 * contacts sync, and the users that came with an update are remembered (with their access hashes) so replies can
 * address them.
 */
import type { Logger } from 'pino'
import { Api } from 'telegram'
import type { ConnectorEvents } from '../connector'
import { privateSenderId, shortToInbound, toInbound, toReaction } from './convert'
import type { Outbox } from './outbox'
import { betaAttachment } from './media-download'
import type { PeerDirectory } from './peers'
import type { BetaClient } from './socket'

export type EventDeps = {
  log: Logger
  /** Where this update's messages and receipts go (catch-up.ts tracks when the edge stored them). */
  events: Pick<ConnectorEvents, 'inbound' | 'receipt'>
  /** A person's reaction (issue 25): not tracked for commit (a lost reaction is not worth holding the update state). */
  onReaction?: ConnectorEvents['reaction']
  peers: PeerDirectory
  outbox: Outbox
  onLoginToken(): void
  /** The address book changed upstream. */
  onContactsChanged(): void
  /** The client downloads go through (null once the session closed). */
  client(): BetaClient | null
}

/** `users`: those of the container (or difference) the update came in. */
export async function handleUpdate(update: unknown, users: Api.TypeUser[], deps: EventDeps): Promise<void> {
  if (typeof update !== 'object' || update === null) return
  for (const user of users) if (user instanceof Api.User) deps.peers.remember(user)

  if (update instanceof Api.UpdateNewMessage) {
    const senderId = privateSenderId(update.message)
    if (senderId === null || !(update.message instanceof Api.Message)) return
    const from = deps.peers.byUserId(senderId)
    if (!from) return void deps.log.warn({ user: senderId }, 'beta: a message from a user the update did not describe; skipped')
    deps.events.inbound(toInbound(update.message, from, betaAttachment(update.message, deps.client)))
    return
  }
  if (update instanceof Api.UpdateShortMessage) {
    if (update.out) return
    const from = deps.peers.byUserId(update.userId.toString())
    // catch-up.ts fetches the difference (with the user) instead of handing over a short message from a stranger.
    if (!from) return void deps.log.warn({ user: update.userId.toString() }, 'beta: a short message from an unknown user; skipped')
    deps.events.inbound(shortToInbound(update, from))
    return
  }
  if (update instanceof Api.UpdateReadHistoryOutbox) {
    if (!(update.peer instanceof Api.PeerUser)) return
    const read = await deps.outbox.readUpTo(update.peer.userId.toString(), update.maxId)
    for (const id of read) deps.events.receipt({ upstreamId: String(id), status: 'read' })
    return
  }
  if (update instanceof Api.UpdateMessageReactions && update.peer instanceof Api.PeerUser) {
    const from = deps.peers.byUserId(update.peer.userId.toString())
    const reaction = from ? toReaction(update, from, Date.now()) : null
    if (reaction) deps.onReaction?.(reaction)
    return
  }
  if (update instanceof Api.UpdateLoginToken) return deps.onLoginToken()
  if (update instanceof Api.UpdateContactsReset || update instanceof Api.UpdateUserPhone) return deps.onContactsChanged()
  if (update instanceof Api.UpdatePeerSettings && update.peer instanceof Api.PeerUser) return deps.onContactsChanged()
}
