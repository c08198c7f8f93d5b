/**
 * Moving a tenant to another shard (POST /admin/tenants/{id}/move; docs/ARCHITECTURE.md, "Moving a tenant"), as
 * plain steps over the directory, the two shards and the tenant's accounts' objects, each bounded and safe to
 * repeat, with the clock handed in. The mover's Durable Object (move-do.ts) runs one step per alarm.
 *
 * 1. fencing: the old shard refuses every write of the tenant (its fence row; the triggers do the refusing, so no
 *    writer can slip past with a stale placement), and each account's object is told: sends and pushes answer 503
 *    `temporarily_unavailable` with Retry-After, open waits are answered and told to repeat, timers wait.
 * 2. clearing, copying: the tenant's rows go over in pages, renumbered where cursors count (db/cursor-maps.ts).
 * 3. verifying: every table's rows are counted and digested on both sides; the account figures must agree too.
 * 4. the flip: the directory names the new shard and the next placement; the objects are told.
 * 5. settling: the old rows stay, readable and refusing writes, until every isolate's cached placement has expired.
 * 6. draining: the old rows go. The old shard keeps the tenant's fence (`left`), so a writer that still names it
 *    is refused rather than lost.
 * A failure before the flip is retried; past MAX_STEP_FAILURES in a row the copy is deleted and the tenant stays.
 */
import { getTenant, mirrorTenantStatement } from '../db/tenants'
import { claimMove, flipPlacement, releaseMove, tenantPlacement, type Placement } from '../db/placement'
import { clearFence, setFence } from '../db/fences'
import { mapThrough, type Segment } from '../db/cursor-maps'
import {
  accountObjectsOf,
  carryStatsStatements,
  copiedUpTo,
  copyStatements,
  deletePage,
  dropZeroStats,
  MOVED_TABLES,
  pageDigest,
  readPage,
  segmentsBetween,
  statsOf,
  type MovedTable,
} from '../db/move-rows'
import { shardStats } from '../db/shard-stats'
import { directory, DIRECTORY_SHARD, shardCount, shardDb } from '../db/shards'
import type { Db } from '../db/client'
import { tenants } from '../../schema/d1'
import { eq } from 'drizzle-orm'
import type { ErrorCode } from '../lib/error-codes'
import { accountStub } from '../lib/objects'
import { AFTER_FLIP, type MoveState } from './move-state'

/** Rows one page of the copy, the check or the deletes handles. */
export const MOVE_PAGE_ROWS = 200
/** Pages one step handles before it gives the object back (an alarm stays short). */
export const PAGES_PER_STEP = 10
/**
 * How long the old rows stay after the flip: longer than any isolate caches a placement (api-key.ts
 * AUTH_CACHE_TTL_MS, db/placement.ts PLACEMENT_CACHE_TTL_MS, 5 s each) and than a request that read one runs.
 */
export const MOVE_SETTLE_MS = 30_000
/** Failed steps in a row before a move not yet flipped is given up. */
export const MAX_STEP_FAILURES = 20
/** A failed step is tried again this much later. */
export const STEP_RETRY_MS = 10_000

export type MoveRefusal = { status: 400 | 404 | 409 | 507; code: ErrorCode; message: string }

/** Checks a move and marks it begun in the directory; the steps do the rest. */
export async function startMove(env: Env, id: string, tenantId: string, to: number, now: number): Promise<MoveState | MoveRefusal> {
  const dir = directory(env)
  const tenant = await getTenant(dir, tenantId)
  if (!tenant) return { status: 404, code: 'tenant_not_found', message: 'No such tenant' }
  if (to >= shardCount(env)) return { status: 400, code: 'unknown_shard', message: `No shard ${to}: this gateway binds ${shardCount(env)}` }
  if (tenant.movingTo !== null) return { status: 409, code: 'move_running', message: `The tenant is already moving to shard ${tenant.movingTo}` }
  if (tenant.shard === to) return { status: 409, code: 'already_there', message: `The tenant lives on shard ${to} already` }
  const target = (await shardStats(env))[to]
  if (target?.level !== 'ok' && target?.level !== 'warning') {
    return { status: 507, code: 'shard_full', message: `Shard ${to} is ${target?.level ?? 'unknown'}: it takes no tenant (GET /admin/shards)` }
  }
  if (!(await claimMove(dir, tenantId, tenant.shard, to))) return { status: 409, code: 'move_running', message: 'The tenant changed meanwhile; try again' }
  return {
    id,
    tenantId,
    from: tenant.shard,
    to,
    placement: tenant.placement,
    phase: 'fencing',
    accounts: [],
    table: 0,
    after: null,
    side: 'source',
    tallies: [],
    copied: 0,
    deleted: 0,
    startedAt: now,
    updatedAt: now,
    settleUntil: null,
    finishedAt: null,
    error: null,
    failures: 0,
  }
}

/** Tells every account's object where its tenant now is (idempotent; an object ignores an older word). */
async function tell(env: Env, s: MoveState, p: Placement): Promise<void> {
  await Promise.all(s.accounts.map((a) => accountStub(env, s.tenantId, a).placementChanged(p)))
}

/** Deletes the tenant's rows of `db` a page at a time, tables in reverse order; answers true when none is left. */
async function clearRows(db: Db, s: MoveState, budget: { pages: number }): Promise<boolean> {
  // `s.table` counts the tables already emptied, so the next step goes on where this one stopped.
  const order = [...MOVED_TABLES].reverse()
  while (s.table < order.length) {
    if (budget.pages-- <= 0) return false
    const n = await deletePage(db, order[s.table]!, s.tenantId, MOVE_PAGE_ROWS)
    s.deleted += n
    if (n < MOVE_PAGE_ROWS) s.table++
  }
  await dropZeroStats(db, s.tenantId)
  return true
}

/** The shard's copy of the tenant row goes too, unless the shard is the directory's own database (where it is the row). */
async function dropTenantRow(db: Db, shard: number, tenantId: string): Promise<void> {
  if (shard !== DIRECTORY_SHARD) await db.delete(tenants).where(eq(tenants.id, tenantId))
}

async function copyPages(env: Env, s: MoveState, budget: { pages: number }): Promise<boolean> {
  const source = shardDb(env, s.from)
  const target = shardDb(env, s.to)
  while (s.table < MOVED_TABLES.length) {
    const t = MOVED_TABLES[s.table]!
    // A renumbered table resumes where its recorded maps end (they commit with their rows).
    const after = t.seq ? await copiedUpTo(target, t, s.tenantId, s.placement + 1).then((n) => (n === 0 ? null : [n])) : s.after
    if (budget.pages-- <= 0) return false
    const page = await readPage(source, t, s.tenantId, after, MOVE_PAGE_ROWS)
    const [first, ...rest] = copyStatements(target, t, s.tenantId, s.placement + 1, page.rows)
    if (first) await target.$client.batch([first, ...rest])
    s.copied += page.rows.length
    if (page.rows.length < MOVE_PAGE_ROWS) {
      s.table++
      s.after = null
    } else s.after = page.last
  }
  const stats = await statsOf(source, s.tenantId)
  const [first, ...rest] = carryStatsStatements(target, s.tenantId, stats)
  if (first) await target.$client.batch([first, ...rest])
  return true
}

/** A function mapping old numbers of one page through the maps that cover it. */
function renumberer(segments: Segment[]): (seq: number) => number {
  return (seq) =>
    mapThrough(
      segments.findLast((g) => g.oldFirst <= seq),
      seq,
      'after'
    )
}

/** Reads both sides of every table into its tally; answers the first difference, null when all agree, or 'more'. */
async function verifyPages(env: Env, s: MoveState, budget: { pages: number }): Promise<string | null | 'more'> {
  const source = shardDb(env, s.from)
  const target = shardDb(env, s.to)
  while (s.table < MOVED_TABLES.length) {
    const t: MovedTable = MOVED_TABLES[s.table]!
    const tally = s.tallies[s.table] ?? { source: { rows: 0, sum: '0' }, target: { rows: 0, sum: '0' } }
    s.tallies[s.table] = tally
    if (budget.pages-- <= 0) return 'more'
    const db = s.side === 'source' ? source : target
    const page = await readPage(db, t, s.tenantId, s.after, MOVE_PAGE_ROWS)
    // The new shard holds this move's own maps besides the copied ones.
    const rows = t.name === 'cursor_maps' && s.side === 'target' ? page.rows.filter((r) => Number(r.placement) <= s.placement) : page.rows
    let renumber: ((seq: number) => number) | undefined
    if (s.side === 'source' && t.seq && page.rows.length > 0) {
      const seqs = page.rows.map((r) => Number(r.seq))
      renumber = renumberer(await segmentsBetween(target, t, s.tenantId, s.placement + 1, seqs[0]!, seqs.at(-1)!))
    }
    const side = tally[s.side]
    side.rows += rows.length
    side.sum = String((BigInt(side.sum) + pageDigest(t, rows, renumber)) % (1n << 64n))
    if (page.rows.length === MOVE_PAGE_ROWS) {
      s.after = page.last
      continue
    }
    s.after = null
    if (s.side === 'source') {
      s.side = 'target'
      continue
    }
    s.side = 'source'
    if (tally.source.rows !== tally.target.rows || tally.source.sum !== tally.target.sum) {
      return `${t.name}: the old shard holds ${tally.source.rows} rows (digest ${tally.source.sum}), the new one ${tally.target.rows} (digest ${tally.target.sum})`
    }
    s.table++
  }
  const [was, now] = await Promise.all([statsOf(source, s.tenantId), statsOf(target, s.tenantId)])
  if (JSON.stringify(was) !== JSON.stringify(now)) return `account_stats: ${JSON.stringify(was)} on the old shard, ${JSON.stringify(now)} on the new one`
  return null
}

/** Puts the directory on the new shard unless an earlier try of this step already did. */
async function flip(env: Env, s: MoveState): Promise<boolean> {
  const dir = directory(env)
  const at = await tenantPlacement(dir, s.tenantId)
  if (at?.shard === s.to && at.placement === s.placement + 1) return true
  return flipPlacement(dir, s.tenantId, s.from, s.to, s.placement + 1)
}

function abandon(s: MoveState, error: string): MoveState {
  return { ...s, phase: 'abandoning', error, table: 0, after: null }
}

/** One bounded step of the move (the mover's alarm runs it; a thrown error is retried later). */
export async function stepMove(env: Env, state: MoveState, now: number): Promise<MoveState> {
  const s: MoveState = { ...state, tallies: state.tallies.map((t) => ({ source: { ...t.source }, target: { ...t.target } })), updatedAt: now, failures: 0 }
  const source = shardDb(env, s.from)
  const target = shardDb(env, s.to)
  const budget = { pages: PAGES_PER_STEP }
  switch (s.phase) {
    case 'fencing': {
      // The old shard first: from here on nothing the tenant writes there commits.
      await source.batch([setFence(source, s.tenantId, 'leaving', s.id, now)])
      await target.batch([setFence(target, s.tenantId, 'arriving', s.id, now)])
      s.accounts = await accountObjectsOf(source, s.tenantId)
      await tell(env, s, { shard: s.from, placement: s.placement, movingTo: s.to })
      return { ...s, phase: 'clearing' }
    }
    case 'clearing': {
      if (!(await clearRows(target, s, budget))) return s
      // The shard's own copy of the tenant row is the newest (a suspension is written there first, db/tenants.ts).
      const tenant = (await getTenant(source, s.tenantId)) ?? (await getTenant(directory(env), s.tenantId))
      if (!tenant) return abandon(s, 'the tenant left the directory')
      await dropTenantRow(target, s.to, s.tenantId)
      await mirrorTenantStatement(target, tenant)
      return { ...s, phase: 'copying', table: 0, after: null, deleted: 0 }
    }
    case 'copying':
      if (!(await copyPages(env, s, budget))) return s
      return { ...s, phase: 'verifying', table: 0, after: null, side: 'source', tallies: [] }
    case 'verifying': {
      const found = await verifyPages(env, s, budget)
      if (found === 'more') return s
      if (found !== null) return abandon(s, `verification failed: ${found}`)
      if (!(await flip(env, s))) return abandon(s, 'the directory no longer names the old shard for this tenant')
      await target.batch([clearFence(target, s.tenantId, s.id)])
      await tell(env, s, { shard: s.to, placement: s.placement + 1, movingTo: null })
      return { ...s, phase: 'settling', table: 0, after: null, settleUntil: now + MOVE_SETTLE_MS }
    }
    case 'settling':
      // Deletes of the tenant's rows pass the fence from here on; inserts and updates never again.
      await source.batch([setFence(source, s.tenantId, 'left', s.id, now)])
      return { ...s, phase: 'draining', deleted: 0 }
    case 'draining':
      if (!(await clearRows(source, s, budget))) return s
      await dropTenantRow(source, s.from, s.tenantId)
      return { ...s, phase: 'done', finishedAt: now }
    case 'abandoning': {
      if (!(await clearRows(target, s, budget))) return s
      await dropTenantRow(target, s.to, s.tenantId)
      await target.batch([clearFence(target, s.tenantId, s.id)])
      await source.batch([clearFence(source, s.tenantId, s.id)])
      await releaseMove(directory(env), s.tenantId, s.to)
      await tell(env, s, { shard: s.from, placement: s.placement, movingTo: null })
      return { ...s, phase: 'failed', finishedAt: now }
    }
    case 'done':
    case 'failed':
      return s
  }
}

/** When the next step should run: at once, after the settle, or never. */
export function nextStepAt(s: MoveState, now: number): number | null {
  if (s.phase === 'done' || s.phase === 'failed') return null
  if (s.phase === 'settling') return s.settleUntil ?? now
  return now
}

/** A step that threw: retried later, and past MAX_STEP_FAILURES before the flip, given up. */
export function afterFailure(s: MoveState, err: unknown, now: number): { state: MoveState; at: number } {
  const failures = s.failures + 1
  const error = err instanceof Error ? err.message : String(err)
  if (failures >= MAX_STEP_FAILURES && !AFTER_FLIP.has(s.phase) && s.phase !== 'abandoning') {
    return { state: abandon({ ...s, failures: 0, updatedAt: now }, `gave up after ${failures} failed steps: ${error}`), at: now }
  }
  return { state: { ...s, failures, error, updatedAt: now }, at: now + STEP_RETRY_MS }
}
