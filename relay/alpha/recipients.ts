/**
 * Who a send may go to on alpha. A phone-only recipient is looked up once (`onWhatsApp`, a USync contact query):
 * Baileys would otherwise "send" to a number with no account and the message would stay pending forever. And while
 * alpha restricts new chats (463, the reach-out time lock), whether the recipient is an existing chat, read the way
 * Baileys reads it: a privacy token (tctoken) stored for them, unexpired (Utils/tc-token-utils.js).
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

export function makeNumberLookup(now: () => number): NumberLookup {
  const cache = new Map<string, { jid: string | null; at: number }>()

  return {
    async jidFor(sock, phone) {
      const hit = cache.get(phone)
      if (hit && now() - hit.at < (hit.jid ? LOOKUP_FOUND_TTL_MS : LOOKUP_ABSENT_TTL_MS)) return hit.jid
      let timer: ReturnType<typeof setTimeout> | undefined
      const answer = await Promise.race([
        sock.onWhatsApp(phone),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timed out')), LOOKUP_TIMEOUT_MS)
        }),
      ])
        .catch((err: unknown) => {
          throw new SendError('upstream_error', `alpha did not answer whether ${phone} has an account: ${err instanceof Error ? err.message : String(err)}`)
        })
        .finally(() => clearTimeout(timer))
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
