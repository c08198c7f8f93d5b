/**
 * Sends that were counted but whose D1 commit has not answered yet, per person, and what happened to that person
 * meanwhile: later sends to them, and whether they wrote (which restarts their loop-guard count). A send whose
 * commit fails uses this to give back exactly its own part (guards.ts `giveBackGuard`). Memory only: the send and
 * everything that happens during its commit run in this same object instance, which stays alive while it awaits.
 */
export type SinceSend = { laterSends: number; wroteSince: boolean }

type Entry = { pending: number; sends: number; inbounds: number }

export class SendsInFlight {
  private readonly entries = new Map<string, Entry>()

  /** A send to `contactId` was counted; `end()` tells what happened since, and stops watching once none is pending. */
  begin(contactId: string): { end(): SinceSend } {
    const entry = this.entries.get(contactId) ?? { pending: 0, sends: 0, inbounds: 0 }
    entry.pending++
    entry.sends++
    this.entries.set(contactId, entry)
    const sends = entry.sends
    const inbounds = entry.inbounds
    let ended = false
    return {
      end: () => {
        const since = { laterSends: entry.sends - sends, wroteSince: entry.inbounds !== inbounds }
        if (!ended) {
          ended = true
          entry.pending--
          if (entry.pending === 0) this.entries.delete(contactId)
        }
        return since
      },
    }
  }

  /** The person wrote: their loop-guard count restarted under every send to them still in flight. */
  wrote(contactId: string): void {
    const entry = this.entries.get(contactId)
    if (entry) entry.inbounds++
  }
}
