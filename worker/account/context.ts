/** What the AccountDO hands its procedures (send, ingest, delivery, waits): storage, D1, timers, background work. */
import type { Db } from '../db/client'
import type { LinkSignal } from './link-state'
import type { AccountStore, TimerName } from './storage'
import type { WaitRoom } from './waits'

export type AccountContext = {
  env: Env
  db: Db
  store: AccountStore
  waits: WaitRoom
  /** Wakes callers waiting for the alpha/beta link to change (the pairing-code wait of a connect call). */
  linkSignal: LinkSignal
  /** Sets a named timer; the object's single alarm always points at the earliest one. */
  schedule(name: TimerName, at: number): Promise<void>
  unschedule(name: TimerName): Promise<void>
  /** Keeps the object alive until `work` settles (the response has already gone out). */
  background(work: Promise<unknown>): void
}
