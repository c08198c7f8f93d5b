/**
 * The SessionStore drivers see, kept at the edge: every entry is encrypted here (relay/crypto.ts) and written to
 * the account's Durable Object. Writes made in the same tick go out as one frame (Baileys writes keys in bursts),
 * and a write resolves only once the edge acked that frame, as the SessionStore contract demands.
 */
import type { SessionStore } from '../connector'
import { SessionUnreadableError, type SessionCrypto } from '../crypto'
import type { Reply } from '../link/outbox'
import type { ReliableRelayFrame } from '../../schema/frames'

export type StoreLink = { request(frame: ReliableRelayFrame): Promise<Reply> }

/** The session's lease moved elsewhere: the edge refused the write, and this relay must stop the session. */
export class LeaseLostError extends Error {
  constructor(sid: string) {
    super(`the lease of session ${sid} is held elsewhere`)
    this.name = 'LeaseLostError'
  }
}

type Pending = { clear: boolean; changes: Map<string, string | null>; waiters: Array<{ resolve: () => void; reject: (e: Error) => void }> }

export class EdgeSessionStore implements SessionStore {
  private pending: Pending | null = null

  constructor(
    private readonly link: StoreLink,
    private readonly sid: string,
    private readonly fence: number,
    /** `tenant/account`: bound into every ciphertext. */
    private readonly account: string,
    private readonly crypto: SessionCrypto,
    private readonly nextId: () => string
  ) {}

  async loadAll(): Promise<Map<string, string>> {
    const reply = await this.link.request({ type: 'session_load', id: this.nextId(), sid: this.sid, fence: this.fence })
    if (reply.type === 'reject') throw new LeaseLostError(this.sid)
    if (reply.type === 'link_closed') throw new Error('the relay link is closed: the session cannot be loaded')
    if (reply.type !== 'session_data') throw new Error('unexpected answer to session_load')
    const out = new Map<string, string>()
    for (const [stored, sealed] of Object.entries(reply.entries)) {
      const { name, value } = this.crypto.open(this.account, stored, sealed)
      if (this.crypto.storedName(this.account, name) !== stored) throw new SessionUnreadableError('a session entry is stored under the wrong name')
      out.set(name, value)
    }
    return out
  }

  write(changes: Map<string, string | null>): Promise<void> {
    const p = this.batch()
    for (const [k, v] of changes) p.changes.set(k, v)
    return this.wait(p)
  }

  clear(): Promise<void> {
    const p = this.batch()
    p.clear = true
    p.changes.clear()
    return this.wait(p)
  }

  private batch(): Pending {
    if (!this.pending) {
      this.pending = { clear: false, changes: new Map(), waiters: [] }
      setImmediate(() => void this.flush())
    }
    return this.pending
  }

  private wait(p: Pending): Promise<void> {
    return new Promise((resolve, reject) => p.waiters.push({ resolve, reject }))
  }

  private async flush(): Promise<void> {
    const p = this.pending
    this.pending = null
    if (!p) return
    const changes: Record<string, string | null> = {}
    for (const [name, value] of p.changes) {
      if (value === null) changes[this.crypto.storedName(this.account, name)] = null
      else {
        const { stored, sealed } = this.crypto.seal(this.account, name, value)
        changes[stored] = sealed
      }
    }
    const reply = await this.link.request({ type: 'session_write', id: this.nextId(), sid: this.sid, fence: this.fence, clear: p.clear, changes })
    // Wiping a session the edge no longer has (the account was removed) has nothing left to do.
    const gone = reply.type === 'reject' && reply.reason === 'unknown_session' && p.clear && p.changes.size === 0
    const err =
      reply.type === 'link_closed'
        ? new Error('the relay link is closed: the write did not reach the edge')
        : reply.type === 'reject' && !gone
          ? new LeaseLostError(this.sid)
          : null
    for (const w of p.waiters) err ? w.reject(err) : w.resolve()
  }
}
