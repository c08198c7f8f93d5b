/**
 * A person on a relay channel as a contact. The contact id is derived from the stable upstream id (the LID when
 * known, else the phone number), and a contact the account already has for the same number keeps its id, so a
 * person written to by number and later writing from a LID stays one contact. `phone` is kept whenever known.
 */
import type { Peer } from '../../../schema/frames'
import type { ContactSeed } from '../../db/contacts'
import { contactIdFor } from '../../lib/ids'
import type { AccountContext } from '../context'
import type { AccountRef } from '../storage'

/** Upstream numbers come as digits; contacts store E.164. */
export function e164(phone: string | null): string | null {
  if (!phone) return null
  const digits = phone.replace(/[^\d]/g, '')
  return digits.length >= 7 && digits.length <= 15 ? `+${digits}` : null
}

/** `knownId` finds the id of a contact the account already has for a number (one query, or a prepared map when importing many). */
export async function contactSeedFor(
  ref: AccountRef,
  peer: Peer,
  knownId: (phone: string) => Promise<string | undefined> | string | undefined
): Promise<ContactSeed> {
  const phone = e164(peer.phone)
  const id =
    (phone ? await knownId(phone) : undefined) ??
    (await contactIdFor(
      ref.tenantId,
      ref.accountId,
      peer.lid ? { kind: 'lid', value: peer.lid } : phone ? { kind: 'phone', value: phone } : { kind: 'lid', value: peer.id }
    ))
  return {
    id,
    tenantId: ref.tenantId,
    accountId: ref.accountId,
    channel: ref.channel,
    phone,
    peerId: peer.id,
    username: peer.username ?? null,
    name: peer.name,
  }
}

/** The upstream addresses a contact is known by, as kept in the AccountDO's peer_contacts table. */
export function peerAddresses(peer: Peer): string[] {
  const phone = e164(peer.phone)
  return [...(phone ? [`phone:${phone}`] : []), ...(peer.lid ? [`lid:${peer.lid}`] : []), `peer:${peer.id}`]
}

/**
 * The contact seed of an inbound sender: the AccountDO remembers which contact each upstream address maps to, so
 * only the first message from a person costs a D1 lookup.
 */
export async function inboundContactSeed(
  c: AccountContext,
  ref: AccountRef,
  peer: Peer,
  /** The contact already holding a phone number (the caller looks a burst's new numbers up in one read). */
  knownId: (phone: string) => Promise<string | undefined> | string | undefined
): Promise<ContactSeed> {
  const addresses = peerAddresses(peer)
  const cached = addresses.map((a) => c.store.peerContact(a))
  const known = cached.find((id) => id !== undefined)
  const seed = known
    ? {
        id: known,
        tenantId: ref.tenantId,
        accountId: ref.accountId,
        channel: ref.channel,
        phone: e164(peer.phone),
        peerId: peer.id,
        username: peer.username ?? null,
        name: peer.name,
      }
    : await contactSeedFor(ref, peer, knownId)
  if (cached.some((id) => id === undefined)) c.store.rememberPeerContact(addresses, seed.id)
  return seed
}
