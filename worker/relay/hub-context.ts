/** What the RelayHubDO hands its procedures (placement, leases, the frame inbox, the session RPCs). */
import type { ActionOutcome, FrameOf, LoginOutcome, SessionState } from '../../schema/frames'
import type { Db } from '../db/client'
import type { HubStore } from './hub-store'
import type { Link } from './links'

export type HubConfig = {
  /** A session's lease outlives the holder's last heartbeat by this long; only then may it move. */
  leaseMs: number
  /** How often relays send a heartbeat (told to them in `welcome`). */
  heartbeatMs: number
  /** A connected session left without a relay this long is reported as disconnected (`relay_unavailable`). */
  unassignedGraceMs: number
}

/**
 * A question put to one relay link (a live probe, a beta login step): answered by its id, and only on the link it
 * was asked on, so another relay (another token, or a process that never held the session) cannot answer for it.
 */
export type Pending<T> = { ws: WebSocket; settle(answer: T | null): void }

export type HubContext = {
  env: Env
  ctx: DurableObjectState
  db: Db
  store: HubStore
  config: HubConfig
  /** Frames of one session are handled one after the other, so a receipt never overtakes the send it confirms. */
  chains: Map<string, Promise<void>>
  /** Inbound frames waiting for their session's next group commit (see inbox.ts). */
  inbound: Map<string, Array<{ link: Link; frame: FrameOf<'inbound'> }>>
  /** A session's run of consecutive receipts still open for more, handed to the AccountDO in one call (inbox.ts). */
  receipts: Map<string, Array<{ link: Link; frame: FrameOf<'receipt'> }>>
  /** Open status probes by frame id. */
  probes: Map<string, Pending<SessionState>>
  /** Open beta login steps by frame id (the answer carries no secret; the step itself is never kept). */
  logins: Map<string, Pending<LoginOutcome>>
  /** Open chat actions (reactions, typing, read marks, lookups; issue 25) by frame id. */
  actions: Map<string, Pending<ActionOutcome>>
  /** Last frame (other than the heartbeat) per relay process. */
  framesSeen: Map<string, number>
  /** Points the object's alarm at the next lease check. */
  rearm(): Promise<void>
  log(event: string, fields: Record<string, unknown>): void
}

/** Runs `task` after every earlier task of the same session. */
export function inSessionOrder(c: HubContext, sid: string, task: () => Promise<void>): Promise<void> {
  const prev = c.chains.get(sid) ?? Promise.resolve()
  const next = prev.then(task, task)
  c.chains.set(sid, next)
  const cleanup = () => {
    if (c.chains.get(sid) === next) c.chains.delete(sid)
  }
  next.then(cleanup, cleanup)
  return next
}
