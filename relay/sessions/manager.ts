/**
 * The sessions this relay runs, driven by the edge's frames: assign starts one (stopping an older run of the same
 * account first, so two connections for one number never overlap), revoke stops it, logout unlinks it, send hands
 * a message to it. Per account everything happens in order. Sessions stop on their own when the lease can no
 * longer be trusted (the link stayed down too long) and, on SIGTERM, are handed back to the edge one by one.
 */
import { randomBytes } from 'node:crypto'
import type { Logger } from 'pino'
import type { MediaUploader } from '../link/media-upload'
import type { EdgeFrame, FrameOf, SessionState } from '../../schema/frames'
import type { Driver } from '../connector'
import type { SessionCrypto } from '../crypto'
import { LEASE_SAFETY_MS } from '../link/backoff'
import type { RelayMeter, SessionSample } from '../metrics'
import { RunningSession, type SessionLink } from './session'

export type ManagerLink = SessionLink & { leaseValidUntil(): number | null; linkState: string; drained(timeoutMs: number): Promise<boolean> }

export class SessionManager {
  private readonly sessions = new Map<string, RunningSession>()
  private readonly chains = new Map<string, Promise<void>>()
  /** Stops in progress per account: a new run waits for them, so one number never has two connections. */
  private readonly stopping = new Map<string, Promise<void>>()
  private draining = false
  private frameSeq = 0
  private readonly idPrefix = randomBytes(4).toString('hex')
  private leaseTimer: NodeJS.Timeout | null = null

  constructor(
    private readonly deps: {
      driverFor: (channel: string) => Driver | null
      crypto: SessionCrypto
      log: Logger
      uploadMedia?: MediaUploader
      meter?: RelayMeter
    },
    private link: ManagerLink | null = null
  ) {}

  attach(link: ManagerLink): void {
    this.link = link
    this.leaseTimer = setInterval(() => this.checkLease(), 500)
    this.leaseTimer.unref()
  }

  nextId = (): string => `${this.idPrefix}-${++this.frameSeq}`

  /** What the hello lists: the sessions still running here. */
  running(): Array<{ sid: string; fence: number }> {
    return [...this.sessions.values()].map((s) => ({ sid: s.sid, fence: s.fence }))
  }

  counts(): Record<string, number> {
    const out: Record<string, number> = {}
    for (const s of this.sessions.values()) {
      const k = s.state?.state ?? 'starting'
      out[k] = (out[k] ?? 0) + 1
    }
    return out
  }

  /** Each session's channel, state and held sends, for GET /metrics. */
  samples(): SessionSample[] {
    return [...this.sessions.values()].map((s) => ({
      channel: s.channel,
      state: s.state?.state ?? 'starting',
      problem: s.state && 'problem' in s.state ? s.state.problem : null,
      heldSends: s.heldSends,
    }))
  }

  /** Sessions by the problem they report (disconnected or restricted ones), for /healthz. */
  problems(): Record<string, number> {
    const out: Record<string, number> = {}
    for (const s of this.sessions.values()) {
      const state = s.state
      if (state && 'problem' in state) out[state.problem] = (out[state.problem] ?? 0) + 1
    }
    return out
  }

  get size(): number {
    return this.sessions.size
  }

  get isDraining(): boolean {
    return this.draining
  }

  onFrame(frame: EdgeFrame): void {
    switch (frame.type) {
      case 'assign':
        return void this.inOrder(`${frame.account.tenantId}/${frame.account.accountId}`, () => this.assign(frame))
      case 'revoke':
        return void this.bySidInOrder(frame.sid, (s) => (s.fence <= frame.fence ? this.remove(s, 'revoked') : Promise.resolve()))
      case 'logout':
        return void this.bySidInOrder(frame.sid, async (s) => {
          if (s.fence > frame.fence) return
          this.sessions.delete(s.key)
          await s.logout()
        })
      case 'send': {
        const s = this.find(frame.sid)
        if (s && s.fence === frame.fence && !this.draining) s.send(frame.message, frame.expiresAt)
        return
      }
      case 'login': {
        // Answered once, never queued or resent: the step holds a secret, and the edge waits only a short while.
        const s = this.find(frame.sid)
        const refused = {
          status: 'refused',
          error: 'no_login_pending',
          message: 'No session of this relay is waiting for that login.',
          retryAfterS: null,
        } as const
        const answer = s && s.fence === frame.fence ? s.login(frame.step) : Promise.resolve(refused)
        void answer.then((outcome) => this.link?.send({ type: 'login_result', id: frame.id, sid: frame.sid, outcome }))
        return
      }
      case 'action': {
        // Answered once, never queued: a late typing notice or read mark is worse than none (worker/relay/control.ts).
        const s = this.find(frame.sid)
        const answer =
          s && s.fence === frame.fence
            ? s.act(frame.action)
            : Promise.resolve({ ok: false, error: 'not_connected', message: 'This relay does not hold that session.', retryAfterS: null } as const)
        void answer.then((outcome) => this.link?.send({ type: 'action_result', id: frame.id, sid: frame.sid, outcome }))
        return
      }
      case 'probe':
        this.link?.send({ type: 'probe_result', id: frame.id, sid: frame.sid, state: this.find(frame.sid)?.snapshot() ?? null })
        return
      case 'reject':
        if (frame.sid && frame.reason !== 'invalid') this.leaseLost(frame.sid, frame.fence ?? null)
        return
      default:
        return
    }
  }

  private find(sid: string): RunningSession | undefined {
    for (const s of this.sessions.values()) if (s.sid === sid) return s
    return undefined
  }

  private inOrder(key: string, task: () => Promise<void>): Promise<void> {
    const next = (this.chains.get(key) ?? Promise.resolve()).then(task, task).catch((err: unknown) => {
      this.deps.log.error({ account_key: key, err: err instanceof Error ? err.message : String(err) }, 'session task failed')
    })
    this.chains.set(key, next)
    void next.then(() => {
      if (this.chains.get(key) === next) this.chains.delete(key)
    })
    return next
  }

  private bySidInOrder(sid: string, task: (s: RunningSession) => Promise<void>): Promise<void> {
    const s = this.find(sid)
    if (!s) return Promise.resolve()
    return this.inOrder(s.key, () => (this.sessions.get(s.key) === s ? task(s) : Promise.resolve()))
  }

  private async assign(frame: FrameOf<'assign'>): Promise<void> {
    const key = `${frame.account.tenantId}/${frame.account.accountId}`
    const log = this.deps.log.child({ sid: frame.sid, account: frame.account.accountId, fence: frame.fence })
    const current = this.sessions.get(key)
    if (current && current.sid === frame.sid && current.fence === frame.fence) return
    if (current) await this.remove(current, 'superseded')
    await this.stopping.get(key)
    if (!this.link) return
    if (this.draining) {
      // Not taking work any more: hand it straight back.
      await this.link.request({ type: 'released', id: this.nextId(), sid: frame.sid, fence: frame.fence, reason: 'draining' })
      return
    }
    const driver = this.deps.driverFor(frame.account.channel)
    if (!driver) {
      log.error({ channel: frame.account.channel }, 'no driver for this channel')
      return
    }
    const session = new RunningSession(frame, {
      driver,
      link: this.link,
      crypto: this.deps.crypto,
      log: this.deps.log,
      uploadMedia: this.deps.uploadMedia,
      meter: this.deps.meter,
      nextId: this.nextId,
      onLeaseLost: (sid, fence) => this.leaseLost(sid, fence),
    })
    this.sessions.set(key, session)
    await session.start()
  }

  private remove(s: RunningSession, why: string): Promise<void> {
    if (this.sessions.get(s.key) === s) this.sessions.delete(s.key)
    this.deps.log.info({ sid: s.sid, account: s.account.accountId, fence: s.fence, why }, 'session removed')
    const stopped = s.stop()
    const tracked = stopped.finally(() => {
      if (this.stopping.get(s.key) === tracked) this.stopping.delete(s.key)
    })
    this.stopping.set(s.key, tracked)
    return tracked
  }

  /**
   * The edge refused a frame of this session as stale: another relay holds it now. Stopped at once, not in the
   * account's queue: a start still waiting for the edge must not delay it.
   */
  private leaseLost(sid: string, fence: number | null): void {
    const s = this.find(sid)
    // A session started under a higher fence than the refused frame's is a newer holder: the refusal is not about it.
    if (s && (fence === null || s.fence <= fence)) void this.remove(s, 'lease held elsewhere')
  }

  /** While the link is down, sessions stop before the edge may hand them to another relay, whatever else is pending. */
  private checkLease(): void {
    if (!this.link || this.link.linkState === 'open' || this.sessions.size === 0) return
    const until = this.link.leaseValidUntil()
    if (until === null || Date.now() < until - LEASE_SAFETY_MS) return
    this.deps.log.warn({ sessions: this.sessions.size }, 'lease expiring without the edge; stopping every session')
    for (const s of [...this.sessions.values()]) void this.remove(s, 'lease expired')
  }

  /** SIGTERM: take no new work, let acks come in, then stop each session and hand it back for another relay. */
  async drain(timeoutMs: number): Promise<void> {
    this.draining = true
    const link = this.link
    if (!link) return
    link.send({ type: 'draining' })
    const deadline = Date.now() + timeoutMs
    await link.drained(Math.max(0, deadline - Date.now()))
    const handBack = [...this.sessions.values()].map((s) =>
      this.inOrder(s.key, async () => {
        await this.remove(s, 'draining')
        if (link.linkState === 'open') await link.request({ type: 'released', id: this.nextId(), sid: s.sid, fence: s.fence, reason: 'draining' })
      })
    )
    await Promise.race([Promise.all(handBack), new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())))])
    await link.drained(Math.max(0, deadline - Date.now()))
  }

  /** Stops everything at once (the token was refused or revoked). */
  async stopAll(why: string): Promise<void> {
    this.draining = true
    if (this.leaseTimer) clearInterval(this.leaseTimer)
    await Promise.all([...this.sessions.values()].map((s) => this.remove(s, why)))
  }

  stateOf(sid: string): SessionState | null {
    return this.find(sid)?.snapshot() ?? null
  }
}
