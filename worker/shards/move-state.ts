/**
 * A tenant's move between shards as the mover keeps it (worker/shards/move.ts runs it, move-do.ts stores it): its
 * phase, where the copy or the check stands, the digests of both sides, and how it ended. Parsed with zod when read
 * back from the Durable Object's storage.
 */
import { z } from 'zod'

/**
 * fencing    the old shard refuses the tenant's writes, the accounts' objects are told
 * clearing   leftovers of the tenant on the new shard (an earlier move given up) are deleted
 * copying    the tables, page by page, renumbering what cursors count in
 * verifying  counts and digests of every table, read on both sides
 * settling   flipped: the directory names the new shard; the old rows wait until no cache can still name them
 * draining   the old rows are deleted
 * done       over
 * abandoning a failure before the flip: the copy is deleted and the tenant stays where it was
 * failed     given up (see `error`)
 */
export const MOVE_PHASES = ['fencing', 'clearing', 'copying', 'verifying', 'settling', 'draining', 'done', 'abandoning', 'failed'] as const
export type MovePhase = (typeof MOVE_PHASES)[number]

const Tally = z.object({ rows: z.number().int(), sum: z.string() })

export const MoveState = z.object({
  id: z.string(),
  tenantId: z.string(),
  from: z.number().int(),
  to: z.number().int(),
  /** The tenant's placement until the flip; the copy's maps lead into `placement + 1`. */
  placement: z.number().int(),
  phase: z.enum(MOVE_PHASES),
  /** Accounts whose objects are told when the move begins and ends. */
  accounts: z.array(z.string()),
  /** The table the copy, the check or the deletes are at (worker/db/move-rows.ts MOVED_TABLES). */
  table: z.number().int(),
  after: z.array(z.union([z.string(), z.number()])).nullable(),
  side: z.enum(['source', 'target']),
  /** Per table: rows and digest sum read on each side. */
  tallies: z.array(z.object({ source: Tally, target: Tally })),
  copied: z.number().int(),
  deleted: z.number().int(),
  startedAt: z.number(),
  updatedAt: z.number(),
  settleUntil: z.number().nullable(),
  finishedAt: z.number().nullable(),
  error: z.string().nullable(),
  /** Steps that failed in a row. */
  failures: z.number().int(),
})
export type MoveState = z.infer<typeof MoveState>

/** Phases after which the tenant lives on the new shard: a failure there is retried, never undone. */
export const AFTER_FLIP: ReadonlySet<MovePhase> = new Set(['settling', 'draining', 'done'])
export const FINISHED: ReadonlySet<MovePhase> = new Set(['done', 'failed'])

/** The admin API's view (schema/api/admin.ts ShardMove). */
export function moveView(s: MoveState) {
  return {
    id: s.id,
    tenant_id: s.tenantId,
    from: s.from,
    to: s.to,
    phase: s.phase,
    rows_copied: s.copied,
    rows_deleted: s.deleted,
    started_at: new Date(s.startedAt).toISOString(),
    updated_at: new Date(s.updatedAt).toISOString(),
    settle_until: s.settleUntil === null ? null : new Date(s.settleUntil).toISOString(),
    finished_at: s.finishedAt === null ? null : new Date(s.finishedAt).toISOString(),
    error: s.error,
  }
}
export type MoveView = ReturnType<typeof moveView>
