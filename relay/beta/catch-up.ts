/**
 * beta's update state on the relay (core.telegram.org/api/updates), which GramJS does not keep (its `catchUp()` is a
 * TODO): the common box's `pts` with `qts`, `date` and `seq`, the rules applied to every Updates container the session
 * receives, and `updates.getDifference` wherever they say something was missed. beta pushes an update only to a
 * session connected when it happens, so this is what brings the messages and read receipts of every restart,
 * failover, deploy and reconnect.
 *
 * - An update whose pts follows ours is applied; one already applied is skipped; one beyond a gap waits GAP_WAIT_MS
 *   for the missing ones, then the difference is fetched. `seq` on Updates containers is checked the same way.
 * - `updatesTooLong`, a short message from someone the directory does not know (it carries no user), the start of a
 *   session, a reconnect and a probe that sees the server ahead all fetch the difference, slice by slice.
 * - `differenceTooLong` (the gap is longer than beta remembers): the state jumps, and the newest messages of the
 *   recent dialogs are refetched with messages.getHistory (what came since our last state), with each dialog's read
 *   mark as a receipt. The edge de-duplicates what it already has.
 * - Everything goes through one queue, in order. The state is saved with the session (UPDATE_STATE_KEY, sealed like
 *   the rest) only up to the last update whose messages and receipts the edge has stored, so a relay that dies
 *   resumes where the edge stands, never past it.
 */
import type { Logger } from 'pino'
import { Api } from 'telegram'
import { z } from 'zod'
import { commitTracker, type UpdateEvents, type UpdateState } from './commit-tracker'
import { recentHistory } from './recover-history'

export const UPDATE_STATE_KEY = 'beta-update-state'

export type CatchUpTiming = {
  /** How long an update after a gap waits for the missing ones before the difference is fetched (beta's advice: 0.5 s). */
  gapWaitMs: number
  /** At most one write of the state per this interval. */
  persistEveryMs: number
}
export const CATCH_UP_TIMING: CatchUpTiming = { gapWaitMs: 500, persistEveryMs: 1_000 }

const StoredState = z.object({ pts: z.number().int(), qts: z.number().int(), date: z.number().int(), seq: z.number().int() }) satisfies z.ZodType<UpdateState>

export type CatchUpDeps = {
  invoke(request: Api.AnyRequest): Promise<unknown>
  /** One update through handle-events, with the users that came with it, its events reported through `events`. */
  dispatch(update: Api.TypeUpdate | Api.UpdateShortMessage, users: Api.TypeUser[], events: UpdateEvents): Promise<void>
  events: UpdateEvents
  /** Whether the peer directory knows this user (a short message carries none). */
  knows(userId: string): boolean
  save(raw: string): Promise<void>
  log: Logger
  timing: CatchUpTiming
}

export type CatchUp = {
  /** The state saved with the session, if any. */
  load(raw: string | undefined): void
  /** A new login: the session starts from the server's state now. */
  reset(): void
  /** The session is live: fetch what was missed since the saved state (or take the server's state). */
  start(): void
  onUpdates(updates: Api.TypeUpdates): void
  catchUp(reason: string): void
  /** The server's state, from a probe: ahead of ours means something was missed. */
  checkState(state: Api.updates.State): void
  /** Saves what the edge has stored, now. */
  flush(): Promise<void>
  stop(): Promise<void>
}

type Pts = { pts: number; count: number }
type Held = { pts: Pts; apply: (after: UpdateState) => Promise<void> } | { seq: number; updates: Api.Updates | Api.UpdatesCombined }

/** Updates of the common message box (channels keep their own pts; the driver ignores channels). */
function ptsOf(u: unknown): Pts | null {
  if (
    u instanceof Api.UpdateNewMessage ||
    u instanceof Api.UpdateDeleteMessages ||
    u instanceof Api.UpdateReadHistoryInbox ||
    u instanceof Api.UpdateReadHistoryOutbox ||
    u instanceof Api.UpdateEditMessage ||
    u instanceof Api.UpdateReadMessagesContents ||
    u instanceof Api.UpdateWebPage ||
    u instanceof Api.UpdatePinnedMessages ||
    u instanceof Api.UpdateFolderPeers
  )
    return { pts: u.pts, count: u.ptsCount }
  return null
}

const stateOf = (s: Api.updates.State): UpdateState => ({ pts: s.pts, qts: s.qts, date: s.date, seq: s.seq })

export function makeCatchUp(deps: CatchUpDeps): CatchUp {
  const log = deps.log
  let state: UpdateState | null = null
  let started = false
  let stopped = false
  let chain: Promise<void> = Promise.resolve()
  let diffQueued = false
  let held: Held[] = []
  let gapTimer: ReturnType<typeof setTimeout> | null = null
  const tracker = commitTracker({ events: deps.events, save: deps.save, log: deps.log, persistEveryMs: deps.timing.persistEveryMs })

  function enqueue(work: () => Promise<void>) {
    chain = chain.then(work).catch((err: unknown) => log.error({ err: err instanceof Error ? err.message : String(err) }, 'beta: update handling failed'))
  }

  function requestDifference(reason: string) {
    if (diffQueued || stopped) return
    diffQueued = true
    enqueue(async () => {
      diffQueued = false
      await difference(reason)
    })
  }

  /** Applies `update` (or nothing) as the state `after`; the state moves once it is handed on. */
  async function applyAs(after: UpdateState, update: Api.TypeUpdate | Api.UpdateShortMessage | null, users: Api.TypeUser[]) {
    const unit = tracker.open(after)
    try {
      if (update) await deps.dispatch(update, users, unit.events)
    } finally {
      unit.close()
    }
    state = after
  }

  async function applyPts(p: Pts, apply: (after: UpdateState) => Promise<void>) {
    if (!state) return
    if (state.pts + p.count === p.pts) {
      await apply({ ...state, pts: p.pts })
      return drainHeld()
    }
    if (state.pts + p.count > p.pts) return // applied already
    hold({ pts: p, apply })
  }

  function hold(h: Held) {
    held.push(h)
    if (gapTimer) return
    gapTimer = setTimeout(() => {
      gapTimer = null
      requestDifference('an update gap')
    }, deps.timing.gapWaitMs)
  }

  async function drainHeld() {
    for (let progressed = true; progressed && state; ) {
      progressed = false
      for (const h of [...held]) {
        if ('pts' in h) {
          if (state.pts + h.pts.count < h.pts.pts) continue
          held = held.filter((x) => x !== h)
          if (state.pts + h.pts.count === h.pts.pts) await h.apply({ ...state, pts: h.pts.pts })
        } else {
          if (h.seq > state.seq + 1) continue
          held = held.filter((x) => x !== h)
          if (h.seq === state.seq + 1) await container(h.updates)
        }
        progressed = true
      }
    }
    if (held.length === 0 && gapTimer) {
      clearTimeout(gapTimer)
      gapTimer = null
    }
  }

  async function one(update: Api.TypeUpdate, users: Api.TypeUser[]) {
    const p = ptsOf(update)
    if (!p) return deps.dispatch(update, users, deps.events)
    await applyPts(p, (after) => applyAs(after, update, users))
  }

  async function container(u: Api.Updates | Api.UpdatesCombined) {
    if (!state) return
    const seqStart = u instanceof Api.UpdatesCombined ? u.seqStart : u.seq
    if (u.seq !== 0) {
      if (u.seq <= state.seq) return // applied already
      if (seqStart > state.seq + 1) return hold({ seq: seqStart, updates: u })
    }
    for (const inner of u.updates) await one(inner, u.users)
    if (u.seq !== 0 && state) await applyAs({ ...state, seq: u.seq, date: u.date }, null, [])
    await drainHeld()
  }

  async function process(u: Api.TypeUpdates) {
    if (!started || !state) {
      // Before the session is live (a login in progress): nothing to order against yet.
      for (const [update, users] of unpack(u)) await deps.dispatch(update, users, deps.events)
      return
    }
    if (u instanceof Api.UpdatesTooLong) return difference('updatesTooLong')
    if (u instanceof Api.UpdateShortMessage) {
      // beta sends short messages from people it expects the session to know; one it does not is fetched with its user.
      if (!u.out && !deps.knows(u.userId.toString())) return difference('a short message from someone not in the directory')
      return applyPts({ pts: u.pts, count: u.ptsCount }, (after) => applyAs(after, u, []))
    }
    if (u instanceof Api.UpdateShortChatMessage || u instanceof Api.UpdateShortSentMessage)
      return applyPts({ pts: u.pts, count: u.ptsCount }, (after) => applyAs(after, null, []))
    if (u instanceof Api.UpdateShort) return one(u.update, [])
    if (u instanceof Api.Updates || u instanceof Api.UpdatesCombined) return container(u)
  }

  async function difference(reason: string) {
    if (!started || !state || stopped) return
    if (gapTimer) clearTimeout(gapTimer)
    gapTimer = null
    log.info({ reason, pts: state.pts }, 'beta: fetching the update difference')
    for (;;) {
      let d: unknown
      try {
        d = await deps.invoke(new Api.updates.GetDifference({ pts: state.pts, date: state.date, qts: state.qts }))
      } catch (err) {
        // The next reconnect, probe or gap asks again.
        log.warn({ err: err instanceof Error ? err.message : String(err) }, 'beta: fetching the update difference failed')
        return
      }
      if (d instanceof Api.updates.DifferenceEmpty) {
        await applyAs({ ...state, date: d.date, seq: d.seq }, null, [])
        break
      }
      if (d instanceof Api.updates.DifferenceTooLong) {
        await recoverHistory(d.pts)
        break
      }
      if (!(d instanceof Api.updates.Difference || d instanceof Api.updates.DifferenceSlice))
        throw new Error('beta: updates.getDifference answered something else')
      const after = stateOf(d instanceof Api.updates.DifferenceSlice ? d.intermediateState : d.state)
      const updates = [...d.newMessages.map((message) => new Api.UpdateNewMessage({ message, pts: after.pts, ptsCount: 0 })), ...d.otherUpdates]
      await applyMany(after, updates, d.users)
      if (d instanceof Api.updates.Difference) break
    }
    // What waited behind a gap came with the difference (or comes after it): the rules sort it out.
    await drainHeld()
  }

  async function applyMany(after: UpdateState, updates: Array<Api.TypeUpdate>, users: Api.TypeUser[]) {
    const unit = tracker.open(after)
    try {
      for (const u of updates) await deps.dispatch(u, users, unit.events)
    } finally {
      unit.close()
    }
    state = after
  }

  /** differenceTooLong: the state jumps; what came since our last state is refetched per dialog (recover-history.ts). */
  async function recoverHistory(pts: number) {
    if (!state) return
    log.warn({ from: state.pts, to: pts }, 'beta: the gap is longer than beta keeps; refetching recent history per dialog')
    const { messages, reads, users } = await recentHistory(deps.invoke, state.date, pts)
    const updates = [...messages.map((message) => new Api.UpdateNewMessage({ message, pts, ptsCount: 0 })), ...reads]
    await applyMany({ ...state, pts }, updates, users)
    log.warn({ messages: messages.length, receipts: reads.length }, 'beta: recent history refetched after differenceTooLong')
  }

  return {
    load(raw) {
      state = null
      if (!raw) return
      try {
        const parsed = StoredState.safeParse(JSON.parse(raw))
        if (parsed.success) state = parsed.data
      } catch {
        // A damaged entry costs a fresh start from the server's state, nothing else.
      }
      tracker.loaded(state)
    },
    reset() {
      state = null
      held = []
      tracker.loaded(null)
    },
    start() {
      started = true
      stopped = false
      tracker.reopen()
      enqueue(async () => {
        if (state) return difference('the session started')
        try {
          const s = await deps.invoke(new Api.updates.GetState())
          if (s instanceof Api.updates.State) await applyAs(stateOf(s), null, [])
        } catch (err) {
          log.warn({ err: err instanceof Error ? err.message : String(err) }, 'beta: reading the update state failed; the next probe sets it')
        }
      })
    },
    onUpdates(u) {
      enqueue(() => process(u))
    },
    catchUp: requestDifference,
    checkState(s) {
      enqueue(async () => {
        if (!started || stopped) return
        if (!state) return applyAs(stateOf(s), null, [])
        if (s.pts > state.pts || s.seq > state.seq) requestDifference('the server is ahead of the session')
      })
    },
    flush: () => tracker.flush(),
    async stop() {
      stopped = true
      if (gapTimer) clearTimeout(gapTimer)
      gapTimer = null
      await tracker.close()
    },
  }
}

/** The single updates inside a container, each with the container's users (before the session is live). */
function unpack(u: Api.TypeUpdates): Array<[Api.TypeUpdate | Api.UpdateShortMessage, Api.TypeUser[]]> {
  if (u instanceof Api.Updates || u instanceof Api.UpdatesCombined) return u.updates.map((x) => [x, u.users])
  if (u instanceof Api.UpdateShort) return [[u.update, []]]
  if (u instanceof Api.UpdateShortMessage) return [[u, []]]
  return []
}
