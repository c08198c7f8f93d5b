/** Helpers of the shard tests: a tenant placed on a given shard, a tenant's rows read through each binding, and a move run to its end. */
import { runDurableObjectAlarm } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { expect } from 'vitest'
import { clearAuthCache } from '../../../worker/middleware/api-key'
import { admin, body, type TestTenant } from '../helpers'

/** A fresh tenant with one API key, placed on `shard` by the admin's choice. */
export async function tenantOn(shard: number): Promise<TestTenant> {
  const res = await admin('/admin/tenants', { method: 'POST', json: { shard } })
  expect(res.status).toBe(201)
  const t = await body<{ id: string; shard: number }>(res)
  expect(t.shard).toBe(shard)
  const k = await body<{ id: string; key: string }>(await admin(`/admin/tenants/${t.id}/keys`, { method: 'POST' }))
  return { tenantId: t.id, key: k.key, keyId: k.id }
}

/** Each shard's binding, straight: DB_SHARD_0 is the directory's own database. */
export const SHARDS: D1Database[] = [env.DB_SHARD_0, env.DB_SHARD_1]

/** The tenant's inbound texts on one shard, read through its binding, in `seq` order. */
export async function textsOn(shard: number, tenantId: string): Promise<string[]> {
  const { results } = await SHARDS[shard]!.prepare("SELECT text FROM messages WHERE tenant_id = ? AND direction = 'inbound' ORDER BY seq")
    .bind(tenantId)
    .all<{ text: string }>()
  return results.map((r) => r.text)
}

/** How many of the tenant's rows `table` holds on one shard. */
export async function rowsOn(shard: number, table: string, tenantId: string): Promise<number> {
  const row = await SHARDS[shard]!.prepare(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = ?`).bind(tenantId).first<{ n: number }>()
  return row?.n ?? 0
}

export type MoveBody = { phase: string; from: number; to: number; rows_copied: number; rows_deleted: number; error: string | null }

export async function startMove(tenantId: string, shard: number): Promise<Response> {
  return admin(`/admin/tenants/${tenantId}/move`, { method: 'POST', json: { shard } })
}

/** Runs the mover's alarms (the settle included, without waiting it out) until the move is done or failed. */
export async function finishMove(tenantId: string, maxSteps = 200): Promise<MoveBody> {
  for (let i = 0; i < maxSteps; i++) {
    const move = await moveOf(tenantId)
    if (move.phase === 'done' || move.phase === 'failed') return move
    await runStep(tenantId, move.phase)
  }
  throw new Error(`the move of ${tenantId} did not finish in ${maxSteps} steps`)
}

const moveOf = async (tenantId: string) => body<MoveBody>(await admin(`/admin/tenants/${tenantId}/move`))

/** Phases past the flip (worker/shards/move-state.ts AFTER_FLIP), where a real move has waited out the settle. */
const PAST_FLIP = new Set(['settling', 'draining', 'done'])

/**
 * One alarm of the mover. The settle is not waited out here, so what it waits for is done instead: every cached
 * placement of this isolate (the tests' only one) has expired by the end of a real settle (MOVE_SETTLE_MS). The
 * mover also runs its own alarms (it schedules the next step at once), so the phase read before this step may
 * already be behind: the caches are cleared whenever a phase past the flip is seen, before or after the step, or a
 * placement cached before the flip would outlive the old rows' deletion, which a real settle never lets happen.
 */
async function runStep(tenantId: string, phase: string): Promise<MoveBody> {
  if (PAST_FLIP.has(phase)) clearAuthCache()
  await runDurableObjectAlarm(env.TENANT_MOVE.getByName(tenantId))
  const after = await moveOf(tenantId)
  if (PAST_FLIP.has(after.phase)) clearAuthCache()
  return after
}

/** Runs one alarm of the mover: a step of the move. */
export async function stepMove(tenantId: string): Promise<MoveBody> {
  return runStep(tenantId, (await moveOf(tenantId)).phase)
}
