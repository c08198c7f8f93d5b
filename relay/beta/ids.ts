/**
 * Identifiers on beta: users are numbers with a per-account access hash, and GramJS keeps those hashes in memory
 * only (StringSession holds none). A peer id carries both (`u<userId>.<accessHash>`), so the edge, which stores it on
 * the contact, can address the person after any relay restart without the upstream's entity cache.
 */
import { createHash } from 'node:crypto'
import bigInt from 'big-integer'
import { Api } from 'telegram'

const PEER_ID = /^u(\d{1,20})\.(-?\d{1,20})$/
const E164 = /^\+[1-9]\d{6,14}$/

export function isE164(phone: string): boolean {
  return E164.test(phone)
}

/** beta gives phones as digits without the plus (`15551234567`); anything else is not a usable number. */
export function upstreamPhoneToE164(digits: string | null | undefined): string | null {
  if (!digits) return null
  const phone = `+${digits.replace(/^\+/, '')}`
  return isE164(phone) ? phone : null
}

export function encodePeerId(userId: bigInt.BigInteger | string, accessHash: bigInt.BigInteger | string): string {
  return `u${userId.toString()}.${accessHash.toString()}`
}

export type PeerRef = { userId: string; accessHash: string }

export function decodePeerId(id: string | null | undefined): PeerRef | null {
  const m = id ? PEER_ID.exec(id) : null
  return m ? { userId: m[1]!, accessHash: m[2]! } : null
}

export function inputPeer(ref: PeerRef): Api.InputPeerUser {
  return new Api.InputPeerUser({ userId: bigInt(ref.userId), accessHash: bigInt(ref.accessHash) })
}

/**
 * The random_id of the send of gateway message `messageId` (a signed 64-bit value from its SHA-256). beta
 * de-duplicates sends on random_id: a repeat answers the message the first call made and sends nothing
 * (core.telegram.org/api/updates, random ID deduplication), so a relay retry of one message is one message.
 */
export function randomIdFor(messageId: string): bigInt.BigInteger {
  return bigInt(createHash('sha256').update(`beta-send:${messageId}`).digest().readBigInt64BE(0).toString())
}

/** The QR a logged-in app scans: the login token, base64url, in beta's deep link. */
export function qrLink(token: Buffer): string {
  return `tg://login?token=${token.toString('base64url')}`
}

/**
 * beta's cache hash (core.telegram.org/api/offsets#hash-generation), unsigned 64-bit: contacts.GetContacts takes
 * it over the saved count and then the sorted contact user ids, and answers ContactsNotModified when it matches.
 */
export function contactsHash(savedCount: number, userIds: Array<string | bigint>): bigInt.BigInteger {
  const mask = (1n << 64n) - 1n
  let hash = 0n
  for (const id of [BigInt(savedCount), ...userIds.map((x) => BigInt(x)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))]) {
    hash ^= hash >> 21n
    hash = (hash ^ (hash << 35n)) & mask
    hash ^= hash >> 4n
    hash = (hash + id) & mask
  }
  // As a signed long, the way the TL field carries it.
  return bigInt((hash >= 1n << 63n ? hash - (1n << 64n) : hash).toString())
}
