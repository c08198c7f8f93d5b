/**
 * Media messages alpha counts delivered that the edge has not stored yet. Baileys acknowledges a message before the
 * driver sees it, and a message with media is reported only after its file was downloaded and uploaded, which takes
 * seconds to minutes: a relay process killed in that window would lose a message alpha never sends again. So each
 * one is kept as a `relay/media/<id>` entry of the stored session (written before the download starts, deleted once
 * the edge stored the message), and the relay that resumes the session hands the kept ones over again; the edge
 * de-duplicates them by their upstream id.
 */
import { proto, toNumber } from '@whiskeysockets/baileys'
import type { WAMessage } from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import { z } from 'zod'
import type { DriverEntries } from './auth-store'

/** Past this many kept at once (the edge not storing anything), new ones are handed over without a kept copy. */
export const PENDING_MEDIA_MAX = 500
/** How long the download waits for its entry to be durable (the link may be down) before it goes ahead anyway. */
export const PENDING_WRITE_WAIT_MS = 5_000
const PREFIX = 'media/'

/** The key as Baileys 7 fills it (its LID/phone alternates are not in the protobuf), and the rest as protobuf bytes. */
const Kept = z.object({
  key: z.object({
    remoteJid: z.string().nullish(),
    remoteJidAlt: z.string().optional(),
    fromMe: z.boolean().nullish(),
    id: z.string(),
    participant: z.string().nullish(),
    participantAlt: z.string().optional(),
    addressingMode: z.string().optional(),
  }),
  info: z.base64(),
})

export type PendingMedia = {
  /** Keeps the message until the returned release is called (when the edge stored it); resolves once durable. */
  keep(msg: WAMessage): Promise<() => void>
  /** The messages a previous run kept and never saw stored, oldest first. */
  restore(): WAMessage[]
}

export function makePendingMedia(deps: { entries: DriverEntries; log: Logger }): PendingMedia {
  const kept = new Set<string>()

  return {
    async keep(msg) {
      const id = msg.key.id
      if (!id || kept.size >= PENDING_MEDIA_MAX) return () => undefined
      const name = PREFIX + id
      kept.add(name)
      const { key, ...rest } = msg
      const info = Buffer.from(proto.WebMessageInfo.encode({ ...rest, key }).finish()).toString('base64')
      let timer: ReturnType<typeof setTimeout> | undefined
      await Promise.race([
        deps.entries.write(name, JSON.stringify({ key: Kept.shape.key.parse(key), info })),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, PENDING_WRITE_WAIT_MS)
        }),
      ])
      clearTimeout(timer)
      return () => {
        if (kept.delete(name)) void deps.entries.write(name, null)
      }
    },
    restore() {
      const out: WAMessage[] = []
      for (const [name, text] of deps.entries.read(PREFIX)) {
        try {
          const { key, info } = Kept.parse(JSON.parse(text))
          const decoded = proto.WebMessageInfo.decode(Buffer.from(info, 'base64'))
          out.push(Object.assign(decoded, { key }))
          kept.add(name)
        } catch {
          deps.log.warn('alpha: a kept media message could not be read; dropping it')
          void deps.entries.write(name, null)
        }
      }
      return out.sort((a, b) => toNumber(a.messageTimestamp ?? 0) - toNumber(b.messageTimestamp ?? 0))
    },
  }
}
