/**
 * Our recent sends, for Baileys' `getMessage`: a recipient device that could not decrypt a message sends a retry
 * receipt, and Baileys re-encrypts the content it gets here. Kept with the session (one `relay/sent/<id>` entry per
 * send), so a retry receipt that arrives after a restart or a failover is still answered; bounded to the last
 * RECENT_SENDS_MAX sends of the last RECENT_SENDS_TTL_MS. An older one is answered "not found" and the recipient's
 * device asks the phone instead.
 */
import { proto } from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import { z } from 'zod'
import type { DriverEntries } from './auth-store'

export const RECENT_SENDS_MAX = 500
/** Baileys keeps its own copies 5 minutes; a recipient's device may come back and ask much later. */
export const RECENT_SENDS_TTL_MS = 24 * 60 * 60 * 1000
const PREFIX = 'sent/'

/** One kept send: when, and the message as its protobuf bytes (base64), the encoding Baileys itself sends. */
const Kept = z.object({ at: z.number(), message: z.base64() })

export type RecentSends = {
  /** Reads what the stored session kept (at start); drops what is too old or over the bound. */
  restore(): void
  remember(id: string, message: proto.IMessage): void
  get(id: string): proto.IMessage | undefined
}

export function makeRecentSends(deps: { now(): number; entries: DriverEntries; log: Logger }): RecentSends {
  /** Oldest first. */
  const recent = new Map<string, { at: number; message: proto.IMessage }>()

  function forget(id: string) {
    recent.delete(id)
    void deps.entries.write(PREFIX + id, null)
  }

  function prune() {
    const cutoff = deps.now() - RECENT_SENDS_TTL_MS
    for (const [id, kept] of recent) {
      if (recent.size <= RECENT_SENDS_MAX && kept.at > cutoff) break
      forget(id)
    }
  }

  return {
    restore() {
      recent.clear()
      const found: Array<[string, { at: number; message: proto.IMessage }]> = []
      for (const [name, text] of deps.entries.read(PREFIX)) {
        const id = name.slice(PREFIX.length)
        try {
          const kept = Kept.parse(JSON.parse(text))
          found.push([id, { at: kept.at, message: proto.Message.decode(Buffer.from(kept.message, 'base64')) }])
        } catch {
          deps.log.warn('alpha: a kept send could not be read; dropping it')
          void deps.entries.write(name, null)
        }
      }
      for (const [id, kept] of found.sort((a, b) => a[1].at - b[1].at)) recent.set(id, kept)
      prune()
    },
    remember(id, message) {
      const at = deps.now()
      recent.delete(id)
      recent.set(id, { at, message })
      const bytes = Buffer.from(proto.Message.encode(message).finish()).toString('base64')
      void deps.entries.write(PREFIX + id, JSON.stringify({ at, message: bytes }))
      prune()
    },
    get(id) {
      const kept = recent.get(id)
      return kept && kept.at > deps.now() - RECENT_SENDS_TTL_MS ? kept.message : undefined
    },
  }
}
