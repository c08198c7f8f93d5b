/**
 * How one account's wait is answered, as a plain function over the object's WaitRoom and a D1 read, so the
 * no-skip/no-repeat guarantee is tested without the runtime (test/worker/account/wait-model.test.ts).
 */
import { WAIT_BATCH } from './wait.shared'
import type { WaitRoom } from './waits'

/** A committed inbound message with its seq: D1's row, or what the AccountDO hands over after its own commit. */
export type Seqd = { seq: number }

/**
 * Inbound rows after `after` (at most WAIT_BATCH, oldest first), null when every wait slot is taken, or `closed` when
 * the tenant began moving to another shard meanwhile. The ticket
 * is registered before the first read, so a message committed during that read still wakes it.
 */
export async function answerWait<T extends Seqd>(
  room: WaitRoom<T>,
  read: (after: number) => Promise<T[]>,
  after: number,
  deadline: number,
  signal: AbortSignal
): Promise<T[] | null | 'closed'> {
  const ticket = room.enter()
  if (!ticket) return null
  try {
    let rows = await read(after)
    while (rows.length === 0) {
      // The read found nothing after `after`, so whatever follows the cursor was committed after the ticket was
      // registered and handed to it, in commit order, unless a commit's rows were not learnt (stale): then D1 again.
      const handed = ticket.take()
      if (handed.stale) {
        rows = await read(after)
        continue
      }
      rows = handed.rows.filter((r) => r.seq > after).slice(0, WAIT_BATCH)
      if (rows.length > 0) break
      const outcome = await ticket.next(deadline, signal)
      // A move of the tenant began: the caller answers the wait with a retry (account/wait.ts).
      if (outcome === 'closed') return 'closed'
      if (outcome !== 'woken') break
    }
    return rows
  } finally {
    room.leave(ticket)
  }
}
