/**
 * Keeping the address book current (§4.2: who may be messaged by phone): contacts.GetContacts on connect, again every
 * CONTACTS_SYNC_MS and whenever beta says the book changed (UpdateContactsReset, a peer's settings or phone changing).
 * Each call carries beta's hash of the book the relay last saw, so an unchanged book costs one small
 * ContactsNotModified; the edge gets the whole book on connect and afterwards only the people added or changed.
 * Until the book has loaded once, no phone can be judged: `loaded` lets a send by phone wait for it (bounded).
 */
import bigInt from 'big-integer'
import type { Logger } from 'pino'
import { Api } from 'telegram'
import type { ImportedContact } from '../connector'
import { contactsHash } from './ids'
import { userToPeer, type PeerDirectory } from './peers'
import type { BetaClient } from './socket'

export const CONTACTS_SYNC_MS = 10 * 60_000
/** Changes arriving together (several contact updates) make one sync. */
export const CONTACTS_DEBOUNCE_MS = 2_000
/** How long a send by phone waits for the book to load once before it fails for now (the gateway tries it again). */
export const CONTACTS_FIRST_SYNC_WAIT_MS = 30_000

export type ContactSyncDeps = {
  client(): BetaClient | null
  peers: PeerDirectory
  log: Logger
  intervalMs: number
  /** The contacts to hand the edge: all of them on the first sync, then the added or changed ones. */
  report(contacts: ImportedContact[]): void
}

export type ContactSync = {
  /** Syncs now (connect). */
  sync(): Promise<void>
  /** beta said the book changed: sync soon. */
  changed(): void
  /**
   * Whether the book has loaded at least once. If not, waits for the sync in flight (or starts one, when the last
   * one failed) for at most `timeoutMs`.
   */
  loaded(timeoutMs: number): Promise<boolean>
  stop(): void
}

export function startContactSync(deps: ContactSyncDeps): ContactSync {
  let hash = bigInt(0)
  let known: Map<string, string> | null = null
  let running: Promise<void> | null = null
  let again = false
  let soon: ReturnType<typeof setTimeout> | null = null
  let stopped = false

  async function once(): Promise<void> {
    const c = deps.client()
    if (!c || stopped) return
    try {
      const result = await c.invoke(new Api.contacts.GetContacts({ hash }))
      if (result instanceof Api.contacts.ContactsNotModified) return
      if (!(result instanceof Api.contacts.Contacts)) return
      hash = contactsHash(
        result.savedCount,
        result.contacts.map((x) => x.userId.toString())
      )
      const list: ImportedContact[] = []
      const seen = new Map<string, string>()
      for (const u of result.users) {
        if (!(u instanceof Api.User)) continue
        deps.peers.remember(u)
        const peer = userToPeer(u)
        if (!peer) continue
        const contact = { ...peer, hasChat: false }
        const key = JSON.stringify(contact)
        seen.set(peer.id, key)
        if (!known || known.get(peer.id) !== key) list.push(contact)
      }
      const first = known === null
      known = seen
      deps.log.info({ contacts: seen.size, changed: list.length }, 'beta: address book synced')
      if (first || list.length > 0) deps.report(list)
    } catch (err) {
      deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'beta: address book sync failed')
    }
  }

  function sync(): Promise<void> {
    if (running) {
      again = true
      return running
    }
    running = once().finally(() => {
      running = null
      if (again && !stopped) {
        again = false
        void sync()
      }
    })
    return running
  }

  const timer = setInterval(() => void sync(), deps.intervalMs)
  return {
    sync,
    async loaded(timeoutMs) {
      if (known !== null) return true
      if (stopped) return false
      let wait: ReturnType<typeof setTimeout> | undefined
      await Promise.race([running ?? sync(), new Promise<void>((resolve) => (wait = setTimeout(resolve, timeoutMs)))])
      clearTimeout(wait)
      return known !== null
    },
    changed() {
      if (soon || stopped) return
      soon = setTimeout(() => {
        soon = null
        void sync()
      }, CONTACTS_DEBOUNCE_MS)
    },
    stop() {
      stopped = true
      clearInterval(timer)
      if (soon) clearTimeout(soon)
    },
  }
}
