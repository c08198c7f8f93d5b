/**
 * The sim driver's chat actions (issue 25): each becomes one device message to the simulated network and waits for
 * its `action_ack` / `action_error` by request id, as alpha's driver waits for Baileys' query answers. Reactions go
 * as alpha's `react` message, typing as `composing` presence, read marks as read receipts, lookups as the on-network
 * query. A network error becomes `refused` with the network's reason; no answer in time, `not_connected`.
 */
import { randomBytes } from 'node:crypto'
import type { ActionOutcome, ChatAction } from '../connector'
import { LID_SUFFIX } from './ids'
import type { ClientMsg } from './network/protocol'

/** An action the network does not answer within this time is reported as not done (the caller may repeat it). */
const ACTION_TIMEOUT_MS = 10_000

type Pending = { resolve(o: ActionOutcome): void; timer: NodeJS.Timeout }

function simTo(to: { phone: string | null; peerId: string | null }) {
  return { phone: to.phone, lid: to.peerId?.endsWith(LID_SUFFIX) ? to.peerId : null }
}

/** The device message for an action, under request id `rid`. */
export function toNetAction(a: ChatAction, rid: string): ClientMsg {
  switch (a.kind) {
    case 'react':
      return { t: 'react', rid, to: simTo(a.to), target: { id: a.target.upstreamId, fromMe: a.target.fromMe }, emoji: a.emoji }
    case 'typing':
      return { t: 'presence', rid, to: simTo(a.to), state: 'composing' }
    case 'read':
      return { t: 'read', rid, to: simTo(a.to), ids: a.upstreamIds }
    case 'lookup':
      return { t: 'lookup', rid, phone: a.phone }
  }
}

export class SimActions {
  private readonly pending = new Map<string, Pending>()

  /** Sends the action through `transmit` (false: not connected) and resolves with the network's answer. */
  run(a: ChatAction, transmit: (msg: ClientMsg) => boolean): Promise<ActionOutcome> {
    const rid = `act_${randomBytes(6).toString('hex')}`
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => this.settle(rid, { ok: false, error: 'not_connected', message: 'The network did not answer in time.', retryAfterS: null }),
        ACTION_TIMEOUT_MS
      )
      this.pending.set(rid, { resolve, timer })
      if (!transmit(toNetAction(a, rid))) this.settle(rid, { ok: false, error: 'not_connected', message: 'The session is not connected.', retryAfterS: null })
    })
  }

  ack(rid: string, onNetwork: boolean | null | undefined): void {
    this.settle(rid, onNetwork === undefined ? { ok: true } : { ok: true, onNetwork })
  }

  error(rid: string, code: number, reason: string): void {
    this.settle(rid, { ok: false, error: code === 428 ? 'not_connected' : 'refused', message: reason, retryAfterS: null })
  }

  /** The connection closed: every open action is answered `not_connected`. */
  closeAll(): void {
    for (const rid of [...this.pending.keys()]) this.settle(rid, { ok: false, error: 'not_connected', message: 'The connection closed.', retryAfterS: null })
  }

  private settle(rid: string, outcome: ActionOutcome): void {
    const p = this.pending.get(rid)
    if (!p) return
    this.pending.delete(rid)
    clearTimeout(p.timer)
    p.resolve(outcome)
  }
}
