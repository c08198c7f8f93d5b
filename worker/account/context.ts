/** What the AccountDO hands its procedures (send, ingest, delivery, waits): storage, D1, timers, background work. */
import type { BatchItem, BatchResponse } from 'drizzle-orm/batch'
import type { ChannelLookup } from './channel-runtime'
import type { Db } from '../db/client'
import type { GroupCommit } from '../db/group-commit'
import type { SessionSignal } from './session/state'
import type { AccountStore, TimerName } from './storage'
import type { WaitRoom } from './waits'

export type AccountContext = {
  env: Env
  /** The registered channels (worker/channels/registry.ts, handed in by worker/index.ts). */
  channels: ChannelLookup
  db: Db
  store: AccountStore
  waits: WaitRoom
  /** Wakes callers waiting for the alpha/beta session to change (the pairing-code wait of a connect call). */
  sessionSignal: SessionSignal
  /** Sets a named timer; the object's single alarm always points at the earliest one. */
  schedule(name: TimerName, at: number): Promise<void>
  unschedule(name: TimerName): Promise<void>
  /** Keeps the object alive until `work` settles (the response has already gone out). */
  background(work: Promise<unknown>): void
  /**
   * Runs one atomic D1 batch. When it inserts events (db/events.ts), webhook fan-out is armed before the write
   * and started right after it, so every event written here reaches its subscriptions. Use it for every batch.
   */
  commit<U extends BatchItem<'sqlite'>, T extends Readonly<[U, ...U[]]>>(statements: T): Promise<BatchResponse<T>>
  /** `commit` for statements compiled once and bound per call (db/compiled.ts): one raw D1 batch, raw results. */
  commitBound(statements: readonly D1PreparedStatement[]): Promise<D1Result[]>
  /** Inbound messages' group commit (through `commitBound`): concurrent messages of the account share one D1 batch. */
  inbound: GroupCommit<D1PreparedStatement>
}
