/**
 * How one account's wait is answered, as a plain function over the object's WaitRoom and a D1 read, so the
 * no-skip/no-repeat guarantee is tested without the runtime (test/worker/account/wait-model.test.ts).
 */
import type { WaitRoom } from './waits'

/** A committed inbound message with its seq: D1's row, or what the AccountDO hands over after its own commit. */
export type Seqd = { seq: number }

/**
 * Inbound rows after `after` (at most WAIT_BATCH, oldest first), or null when every wait slot is taken. The ticket
 * is registered before the first read, so a message committed during that read still wakes it.
 */
export async function answerWait<T extends Seqd>(
  room: WaitRoom<T>,
  read: (after: number) => Promise<T[]>,
  after: number,
  deadline: number,
  signal: AbortSignal
): Promise<T[] | null> {
  const ticket = room.enter()
  if (!ticket) return null
  try {
    let rows = await read(after)
    while (rows.length === 0) {
      if ((await ticket.next(deadline, signal)) !== 'woken') break
      ticket.take()
      rows = await read(after)
    }
    return rows
  } finally {
    room.leave(ticket)
  }
}
