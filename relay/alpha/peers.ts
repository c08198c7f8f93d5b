/**
 * Who a person is on alpha: their LID and their phone number, whichever are known. Baileys records every LID↔phone
 * pair it sees (message envelopes, history sync, `lid-mapping.update`) in the `lid-mapping` keys of the auth state
 * (`<pnUser>` → lidUser and `<lidUser>_reverse` → pnUser); this reads them locally and never asks the network, so
 * handling an inbound message costs no upstream query. Names come from the address book and push names.
 */
import type { SignalKeyStore } from '@whiskeysockets/baileys'
import type { Peer } from '../connector'
import { isLidJid, isPhoneJid, jidToPhone, jidUser, LID_SERVER, personJid, PN_SERVER } from './ids'

/** Bounds the name cache; address books are a few thousand entries, this only stops unbounded growth. */
export const NAME_CACHE_MAX = 20_000

export type PeerDirectory = {
  /** The person behind a JID and its alternate form (`remoteJidAlt`), or null if the JID is not a person. */
  resolve(jid: string | null | undefined, alt?: string | null, pushName?: string | null): Promise<Peer | null>
  /** Remembers a display name; an address-book name wins over the person's own push name. */
  rememberName(jid: string, name: string, source: 'address_book' | 'push_name'): void
  /** The phone JID stored for a LID JID, or null. */
  phoneFor(lidJid: string): Promise<string | null>
}

export function makePeerDirectory(keys: () => SignalKeyStore): PeerDirectory {
  const names = new Map<string, { name: string; source: 'address_book' | 'push_name' }>()

  async function lookup(id: string): Promise<string | null> {
    const found = await keys().get('lid-mapping', [id])
    const user = found[id]
    return typeof user === 'string' && user ? user : null
  }

  function nameOf(...jids: Array<string | null>): string | null {
    let best: string | null = null
    for (const jid of jids) {
      const entry = jid ? names.get(jid) : undefined
      if (entry?.source === 'address_book') return entry.name
      best ??= entry?.name ?? null
    }
    return best
  }

  return {
    async resolve(jid, alt, pushName) {
      const primary = personJid(jid)
      if (!primary) return null
      const other = personJid(alt)
      let lid = isLidJid(primary) ? primary : isLidJid(other) ? other : null
      let pn = isPhoneJid(primary) ? primary : isPhoneJid(other) ? other : null
      if (lid && !pn) {
        const pnUser = await lookup(`${jidUser(lid)}_reverse`)
        if (pnUser) pn = `${pnUser}@${PN_SERVER}`
      } else if (pn && !lid) {
        const lidUser = await lookup(jidUser(pn))
        if (lidUser) lid = `${lidUser}@${LID_SERVER}`
      }
      const id = lid ?? pn ?? primary
      if (pushName) rememberName(id, pushName, 'push_name')
      return { id, lid, phone: jidToPhone(pn), name: nameOf(lid, pn) }
    },
    rememberName,
    async phoneFor(lidJid) {
      const lid = personJid(lidJid)
      if (!lid || !isLidJid(lid)) return null
      const pnUser = await lookup(`${jidUser(lid)}_reverse`)
      return pnUser ? `${pnUser}@${PN_SERVER}` : null
    },
  }

  function rememberName(jid: string, name: string, source: 'address_book' | 'push_name') {
    const person = personJid(jid)
    const trimmed = name.trim()
    if (!person || !trimmed) return
    if (source === 'push_name' && names.get(person)?.source === 'address_book') return
    if (!names.has(person) && names.size >= NAME_CACHE_MAX) {
      const oldest = names.keys().next().value
      if (oldest !== undefined) names.delete(oldest)
    }
    names.set(person, { name: trimmed, source })
  }
}
