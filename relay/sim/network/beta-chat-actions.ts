/**
 * The simulated beta network's chat actions (issue 25), answered as beta's API answers them: messages.SendReaction
 * (the message must be in the chat; an empty list removes the reaction), messages.SetTyping, messages.ReadHistory,
 * each subject to the account's flood wait and the peer's
 * access hash like a send. A person's reaction to one of the account's messages reaches it as UpdateMessageReactions
 * (not a pts event: a session that was away does not get it from GetDifference, as on beta).
 */
import { Api } from 'telegram'
import type { BetaAccount } from './beta-account'

type Rpc = (message: string, code?: number) => Error

/** What these handlers use of the simulated beta network (beta-network.ts), which calls them. */
export type BetaNet = {
  now(): number
  nowS(): number
  recipient(me: BetaAccount, peer: unknown, rpc: Rpc): BetaAccount
  peerOf(a: BetaAccount): Api.PeerUser
  push(a: BetaAccount, updates: Api.TypeUpdates): void
}

/** The answer to a chat action request, or undefined when `request` is not one. */
export function betaChatAction(net: BetaNet, me: BetaAccount, request: Api.AnyRequest, rpc: Rpc): unknown {
  const at = net.now()
  if (request instanceof Api.messages.SendReaction) {
    const to = net.recipient(me, request.peer, rpc)
    const msgId = request.msgId
    if (typeof msgId !== 'number' || !inChat(me, to, msgId, net)) throw rpc('MESSAGE_ID_INVALID')
    const first = request.reaction?.[0]
    const emoji = first instanceof Api.ReactionEmoji ? first.emoticon : ''
    me.actions.push({ kind: 'react', to: to.phone, message_id: msgId, emoji, at })
    return new Api.Updates({ updates: [], users: [], chats: [], date: net.nowS(), seq: 0 })
  }
  if (request instanceof Api.messages.SetTyping) {
    const to = net.recipient(me, request.peer, rpc)
    me.actions.push({ kind: 'typing', to: to.phone, at })
    return true
  }
  if (request instanceof Api.messages.ReadHistory) {
    const to = net.recipient(me, request.peer, rpc)
    me.actions.push({ kind: 'read', to: to.phone, max_id: request.maxId, at })
    // beta moves the reader's pts by one here; the simulator's box keeps only message and read-outbox events, so the
    // answer carries the current pts (the driver ignores it either way: catch-up.ts follows pushed updates).
    return new Api.messages.AffectedMessages({ pts: me.box.pts, ptsCount: 0 })
  }
  return undefined
}

/** Whether message `id` (in `me`'s numbering) is in `me`'s chat with `other`. */
function inChat(me: BetaAccount, other: BetaAccount, id: number, net: BetaNet): boolean {
  const peer = net.peerOf(other).userId.toString()
  return me.history.some((m) => m.id === id && m.peerId instanceof Api.PeerUser && m.peerId.userId.toString() === peer)
}

/**
 * `from` reacts to message `id` of `to`'s chat with them ('' removes the reaction): `to` gets UpdateMessageReactions
 * with the message's reactions as they now are. False when the chat has no such message.
 */
export function betaContactReacts(net: BetaNet, from: BetaAccount, to: BetaAccount, id: number, emoji: string): boolean {
  if (!inChat(to, from, id, net)) return false
  const date = net.nowS()
  const reaction = emoji === '' ? null : new Api.ReactionEmoji({ emoticon: emoji })
  const reactions = new Api.MessageReactions({
    results: reaction ? [new Api.ReactionCount({ reaction, count: 1 })] : [],
    recentReactions: reaction ? [new Api.MessagePeerReaction({ peerId: net.peerOf(from), date, reaction })] : [],
  })
  net.push(to, new Api.UpdateShort({ update: new Api.UpdateMessageReactions({ peer: net.peerOf(from), msgId: id, reactions }), date }))
  return true
}

/** The id a send quoted (InputReplyToMessage), or null. */
export function quotedId(replyTo: Api.TypeInputReplyTo | undefined): number | null {
  return replyTo instanceof Api.InputReplyToMessage ? replyTo.replyToMsgId : null
}
