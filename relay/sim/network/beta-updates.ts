/**
 * One simulated beta account's update box, as the network keeps it (core.telegram.org/api/updates): the common
 * message box's `pts` (every new message, sent or received, and every read-outbox event moves it by one), `seq` for
 * the Updates containers that carry no pts, `date`, and the log `updates.GetDifference` answers from. Nothing here is
 * pushed: the network delivers to connected sessions only, and a session that was away asks for what it missed.
 * `qts` stays 0 (secret chats and bot updates are not simulated).
 */
import { Api } from 'telegram'

/** Updates one `updates.GetDifference` answer carries before it becomes a `DifferenceSlice`. */
export const DIFFERENCE_SLICE = 100
/** pts events the network keeps per account; a session further behind gets `DifferenceTooLong`. */
export const UPDATE_LOG_MAX = 10_000

type Entry = {
  pts: number
  date: number
  /** A new message (sent or received) or another pts update (read outbox). */
  update: Api.UpdateNewMessage | Api.UpdateReadHistoryOutbox
  /** Users the update mentions, as user ids (the viewer's User objects are built when answered). */
  userIds: string[]
}

export type DifferenceOptions = { sliceSize: number; logMax: number }

export class UpdateBox {
  pts = 1
  seq = 0
  date = 0
  private readonly log: Entry[] = []
  /** pts of the oldest event still in the log, minus one: a session at or after it can be caught up. */
  private floor = 1

  /** Records a pts event; answers the pts it took. */
  record(make: (pts: number) => Entry['update'], date: number, userIds: string[], logMax: number): Entry['update'] {
    const update = make(this.pts + 1)
    this.pts += 1
    this.date = date
    this.log.push({ pts: this.pts, date, update, userIds })
    if (this.log.length > logMax) this.forget(this.log.length - logMax)
    return update
  }

  /** The next seq, for an Updates container that carries no pts (address-book changes). */
  nextSeq(date: number): number {
    this.date = date
    this.seq += 1
    return this.seq
  }

  /** Drops the oldest `count` events (the control API's way to make a session fall too far behind). */
  forget(count: number): void {
    const gone = this.log.splice(0, Math.min(count, this.log.length))
    if (gone.length > 0) this.floor = gone.at(-1)!.pts
  }

  state(now: number): Api.updates.State {
    return new Api.updates.State({ pts: this.pts, qts: 0, date: Math.max(this.date, now), seq: this.seq, unreadCount: 0 })
  }

  /**
   * What a session at `pts` missed, as beta answers updates.GetDifference: empty, the whole rest, a slice with the
   * state to ask from next, or too long (the session must refetch history itself).
   */
  difference(req: Api.updates.GetDifference, now: number, opts: DifferenceOptions, users: (ids: string[]) => Api.TypeUser[]): Api.updates.TypeDifference {
    const from = req.pts
    if (from >= this.pts) return new Api.updates.DifferenceEmpty({ date: Math.max(this.date, now), seq: this.seq })
    if (from < this.floor || (typeof req.ptsTotalLimit === 'number' && this.pts - from > req.ptsTotalLimit))
      return new Api.updates.DifferenceTooLong({ pts: this.pts })
    const pending = this.log.filter((e) => e.pts > from)
    // Optional TL fields read back as null.
    const limit = Math.max(1, Math.min(opts.sliceSize, typeof req.ptsLimit === 'number' ? req.ptsLimit : opts.sliceSize))
    const part = pending.slice(0, limit)
    const newMessages = part.flatMap((e) => (e.update instanceof Api.UpdateNewMessage ? [e.update.message] : []))
    const otherUpdates = part.flatMap((e) => (e.update instanceof Api.UpdateNewMessage ? [] : [e.update]))
    const body = { newMessages, newEncryptedMessages: [], otherUpdates, chats: [], users: users([...new Set(part.flatMap((e) => e.userIds))]) }
    if (part.length < pending.length) {
      const last = part.at(-1)!
      const intermediateState = new Api.updates.State({ pts: last.pts, qts: 0, date: last.date, seq: this.seq, unreadCount: 0 })
      return new Api.updates.DifferenceSlice({ ...body, intermediateState })
    }
    return new Api.updates.Difference({ ...body, state: this.state(now) })
  }

  get logged(): number {
    return this.log.length
  }
}
