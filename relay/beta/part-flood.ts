/**
 * Flood waits on file parts. beta throttles file transfers with short waits on single parts (FLOOD_PREMIUM_WAIT_X for
 * accounts without premium, or FLOOD_WAIT_X). The relay gives GramJS floodSleepThreshold 0 so that a message send
 * reports every wait (the account pauses visibly, §8), which would also fail a whole transfer on a wait of seconds. So
 * a transfer sleeps a short wait itself and asks for the same part again, within a budget per transfer; a longer
 * wait, or one past the budget, is thrown to its caller (a send then pauses the account, a download fails and is
 * tried again later). Message sends never come through here.
 */
import { errors } from 'telegram'

/** A wait on one part up to this long is slept inside the transfer. */
export const PART_FLOOD_SLEEP_MAX_S = 60
/** One transfer sleeps at most this long in all; past it, waits reach the caller. */
export const TRANSFER_FLOOD_SLEEP_MAX_S = 300

export type FloodBudget = {
  /** Sleeps out `err` when it is a short flood wait the budget still allows; throws it otherwise. */
  waitOut(err: unknown): Promise<void>
  /** Runs one part's request, sleeping out short flood waits and asking again; throws anything else. */
  part<T>(request: () => Promise<T>): Promise<T>
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export function floodBudget(): FloodBudget {
  let slept = 0
  async function waitOut(err: unknown): Promise<void> {
    if (!(err instanceof errors.FloodWaitError)) throw err
    const seconds = Math.max(1, err.seconds)
    if (seconds > PART_FLOOD_SLEEP_MAX_S || slept + seconds > TRANSFER_FLOOD_SLEEP_MAX_S) throw err
    slept += seconds
    await sleep(seconds * 1000)
  }
  return {
    waitOut,
    async part(request) {
      for (;;) {
        try {
          return await request()
        } catch (err) {
          await waitOut(err)
        }
      }
    },
  }
}
