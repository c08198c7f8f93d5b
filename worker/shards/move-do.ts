/**
 * TenantMoveDO: one Durable Object per tenant (named by its id) that runs the tenant's moves between shards. A thin
 * class: it keeps the move's state in its storage and runs one step of worker/shards/move.ts per alarm, the next
 * alarm at once, after the settle, or after a failure's retry delay. The last move stays readable until the next.
 */
import { DurableObject } from 'cloudflare:workers'
import { newId } from '../lib/ids'
import { afterFailure, nextStepAt, startMove, stepMove, type MoveRefusal } from './move'
import { FINISHED, MoveState, moveView, type MoveView } from './move-state'

const KEY = 'move'

export class TenantMoveDO extends DurableObject<Env> {
  private async load(): Promise<MoveState | undefined> {
    const raw: unknown = await this.ctx.storage.get(KEY)
    return raw === undefined ? undefined : MoveState.parse(raw)
  }

  private async save(state: MoveState, at: number | null): Promise<void> {
    await this.ctx.storage.put(KEY, state)
    if (at === null) await this.ctx.storage.deleteAlarm()
    else await this.ctx.storage.setAlarm(at)
  }

  /** Begins moving `tenantId` to shard `to`; refused while a move of it runs. */
  async start(tenantId: string, to: number): Promise<{ ok: true; move: MoveView } | ({ ok: false } & MoveRefusal)> {
    const running = await this.load()
    if (running && !FINISHED.has(running.phase))
      return { ok: false, status: 409, code: 'move_running', message: `A move to shard ${running.to} runs (${running.phase})` }
    const now = Date.now()
    const state = await startMove(this.env, newId('mov'), tenantId, to, now)
    if (!('phase' in state)) return { ok: false, ...state }
    await this.save(state, now)
    return { ok: true, move: moveView(state) }
  }

  /** The running or the last move. */
  async status(): Promise<MoveView | null> {
    const state = await this.load()
    return state ? moveView(state) : null
  }

  override async alarm(): Promise<void> {
    const state = await this.load()
    if (!state || FINISHED.has(state.phase)) return
    const now = Date.now()
    try {
      const next = await stepMove(this.env, state, now)
      await this.save(next, nextStepAt(next, Date.now()))
    } catch (err) {
      const { state: failed, at } = afterFailure(state, err, now)
      console.error(JSON.stringify({ msg: 'tenant move step failed', tenant: state.tenantId, phase: state.phase, error: failed.error }))
      await this.save(failed, at)
    }
  }
}
