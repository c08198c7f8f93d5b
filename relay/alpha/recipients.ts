/**
 * Who a send may go to on alpha. A phone-only recipient is looked up once (`onWhatsApp`, a USync contact query):
 * Baileys would otherwise "send" to a number with no account and the message would stay pending forever. And while
 * alpha restricts new chats (463, the reach-out time lock), whether the recipient is an existing chat, read the way
 * Baileys reads it: a privacy token (tctoken) stored for them under their LID, unexpired (Utils/tc-token-utils.js),
 * the LID resolved by Baileys' own LID mapping store.
 */
import type { SignalKeyStore } from '@whiskeysockets/baileys'
import { isTcTokenExpired, resolveTcTokenJid } from '@whiskeysockets/baileys/lib/Utils/tc-token-utils.js'
import { personJid } from './ids'
import { SendError } from './send-error'
import type { AlphaSocket } from './socket'

/** A number found on alpha is remembered this long; one without an account for less (people join). */
export const LOOKUP_FOUND_TTL_MS = 24 * 60 * 60 * 1000
export const LOOKUP_ABSENT_TTL_MS = 60 * 60 * 1000
export const LOOKUP_CACHE_MAX = 10_000
export const LOOKUP_TIMEOUT_MS = 20_000

export type NumberLookup = {
  /** The JID alpha knows the E.164 number by, or null when it has no account; throws a retryable SendError on failure. */
  jidFor(sock: AlphaSocket, phone: string): Promise<string | null>
}

/** The upstream's answer within LOOKUP_TIMEOUT_MS; a failure or no answer is a retryable SendError saying `what`. */
async function upstreamAnswer<T>(query: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), LOOKUP_TIMEOUT_MS)
  })
  return Promise.race([query, deadline])
    .catch((err: unknown) => {
      throw new SendError('upstream_error', `${what}: ${err instanceof Error ? err.message : String(err)}`)
    })
    .finally(() => clearTimeout(timer))
}

export function makeNumberLookup(now: () => number): NumberLookup {
  const cache = new Map<string, { jid: string | null; at: number }>()

  return {
    async jidFor(sock, phone) {
      const hit = cache.get(phone)
      if (hit && now() - hit.at < (hit.jid ? LOOKUP_FOUND_TTL_MS : LOOKUP_ABSENT_TTL_MS)) return hit.jid
      const answer = await upstreamAnswer(sock.onWhatsApp(phone), `alpha did not answer whether ${phone} has an account`)
      const found = (answer ?? []).find((r) => r.exists && personJid(r.jid) !== null)
      const jid = found ? personJid(found.jid) : null
      cache.delete(phone)
      cache.set(phone, { jid, at: now() })
      if (cache.size > LOOKUP_CACHE_MAX) cache.delete(cache.keys().next().value!)
      return jid
    },
  }
}

/**
 * Whether we hold a usable privacy token for the person: what makes a 1:1 send an existing chat to alpha. Stored
 * under the LID when one is known (WA Web's choice, followed by Baileys' `resolveTcTokenJid`).
 */
export async function hasChatToken(keys: SignalKeyStore, jid: string, lidFor: (pnJid: string) => Promise<string | null>): Promise<boolean> {
  const storageJid = await resolveTcTokenJid(jid, lidFor)
  const entry = (await keys.get('tctoken', [storageJid]))[storageJid]
  return !!entry?.token?.length && !isTcTokenExpired(entry.timestamp)
}

/**
 * Why a send to `jid` is refused while new chats are held back (`why`, null when they are not), or null when the
 * recipient is an existing chat. A phone JID's LID is resolved as Baileys resolves it for its own tctoken code: the
 * stored pairs, then alpha's USync (Signal/lid-mapping.js `getLIDForPN`), so a reply to someone whose pair this relay
 * never stored is not refused. A lookup that fails is a retryable error, never a refusal.
 */
export async function newChatRefusal(why: string | null, keys: SignalKeyStore, jid: string, sock: AlphaSocket): Promise<SendError | null> {
  if (!why) return null
  const lidFor = (pn: string) => sock.signalRepository.lidMapping.getLIDForPN(pn)
  const existing = await upstreamAnswer(hasChatToken(keys, jid, lidFor), `alpha did not say whether ${jid} is an existing chat`)
  return existing ? null : new SendError('account_restricted', why)
}
