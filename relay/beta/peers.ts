/**
 * The people this session can address, learned from the address book (contacts.GetContacts on connect) and from
 * every update that carries users. In memory only: the edge keeps each person's peer id (with the access hash), so
 * after a restart a reply goes by that id, and a send by phone finds the person again once the address book synced.
 */
import { Api } from 'telegram'
import type { Peer } from '../connector'
import { encodePeerId, upstreamPhoneToE164, type PeerRef } from './ids'

export type PeerDirectory = {
  remember(user: Api.User): Peer | null
  byPhone(phone: string): PeerRef | null
  byUserId(userId: string): Peer | null
}

export function userToPeer(user: Api.User): Peer | null {
  if (user.accessHash === undefined || user.deleted) return null
  const name = [user.firstName, user.lastName].filter((x) => x && x.length > 0).join(' ')
  return {
    id: encodePeerId(user.id, user.accessHash),
    phone: upstreamPhoneToE164(user.phone),
    lid: null,
    name: name.length > 0 ? name : null,
    username: user.username ?? null,
  }
}

export function makePeerDirectory(): PeerDirectory {
  const byId = new Map<string, Peer>()
  const phones = new Map<string, PeerRef>()
  return {
    remember(user) {
      // A `min` user carries an access hash that only works inside the chat it came from; keep what we had.
      const known = byId.get(user.id.toString())
      if (user.min && known) return known
      const peer = userToPeer(user)
      if (!peer) return known ?? null
      byId.set(user.id.toString(), peer)
      if (peer.phone) phones.set(peer.phone, { userId: user.id.toString(), accessHash: user.accessHash!.toString() })
      return peer
    },
    byPhone: (phone) => phones.get(phone) ?? null,
    byUserId: (userId) => byId.get(userId) ?? null,
  }
}
