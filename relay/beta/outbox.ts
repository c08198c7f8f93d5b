/**
 * The messages this account sent that the other side has not read yet, per person. beta reports reading as "every
 * outgoing message up to maxId in this chat" (UpdateReadHistoryOutbox), so the relay turns that into one `read`
 * receipt per message it sent. Kept in the session store (sealed by the relay core) so receipts survive a restart.
 */
import type { SessionStore } from '../connector'

export const OUTBOX_KEY = 'beta-outbox'
/** Per person; older unread ids fall off (the edge times nothing out on them, they just never turn `read`). */
export const OUTBOX_PER_PEER_MAX = 500

export type Outbox = {
  load(raw: string | undefined): void
  sent(userId: string, messageId: number): Promise<void>
  /** The ids now read, removed from the outbox. */
  readUpTo(userId: string, maxId: number): Promise<number[]>
}

function parse(raw: string | undefined): Map<string, number[]> {
  const out = new Map<string, number[]>()
  if (!raw) return out
  try {
    const data: unknown = JSON.parse(raw)
    if (typeof data !== 'object' || data === null) return out
    for (const [k, v] of Object.entries(data)) {
      if (Array.isArray(v))
        out.set(
          k,
          v.filter((x): x is number => Number.isInteger(x))
        )
    }
  } catch {
    // A damaged entry only costs read receipts for messages sent before it.
  }
  return out
}

export function makeOutbox(store: SessionStore): Outbox {
  let unread = new Map<string, number[]>()
  let writes: Promise<void> = Promise.resolve()
  const save = () => {
    const snapshot = JSON.stringify(Object.fromEntries(unread))
    writes = writes.then(() => store.write(new Map([[OUTBOX_KEY, snapshot]])))
    return writes
  }
  return {
    load(raw) {
      unread = parse(raw)
    },
    async sent(userId, messageId) {
      const ids = unread.get(userId) ?? []
      // A retried send beta de-duplicated answers the same id: one message, one receipt.
      if (ids.includes(messageId)) return
      ids.push(messageId)
      if (ids.length > OUTBOX_PER_PEER_MAX) ids.splice(0, ids.length - OUTBOX_PER_PEER_MAX)
      unread.set(userId, ids)
      await save()
    },
    async readUpTo(userId, maxId) {
      const ids = unread.get(userId)
      if (!ids) return []
      const read = ids.filter((id) => id <= maxId)
      if (read.length === 0) return []
      const rest = ids.filter((id) => id > maxId)
      if (rest.length > 0) unread.set(userId, rest)
      else unread.delete(userId)
      await save()
      return read
    },
  }
}
