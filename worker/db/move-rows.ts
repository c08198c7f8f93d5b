/**
 * A tenant's rows between two shards, a bounded page at a time (worker/shards/move.ts runs the move): which tables
 * hold them, reading a page in an index's order, copying it to the other shard in one D1 batch, a digest of a page
 * for the check that both sides hold the same rows, and deleting them.
 *
 * Pages follow an index led by `tenant_id`, through `rowid` (SQLite's last column of every index), so each page is
 * a range of that index whatever the shard holds besides. Rows travel as one JSON parameter (D1 binds at most 100
 * parameters) and are written with `json_each`. `messages`, `events` and `audit_log` are renumbered on the way: the
 * batch records its cursor map (db/cursor-maps.ts) in the same D1 batch, and each row is stored at its old number
 * plus that map's `delta`. A copy repeated after a crash inserts nothing twice (every row has a unique key; a
 * renumbered batch finds its map and the same numbers). `account_stats` is not copied: the rows count themselves
 * on the target by trigger, and only the last-message times the history no longer shows are carried over.
 */
import { getTableConfig, type SQLiteTable } from 'drizzle-orm/sqlite-core'
import {
  accounts,
  auditLog,
  channelConnections,
  contacts,
  cursorMaps,
  events,
  idempotencyKeys,
  media,
  messageApprovals,
  messages,
  socialFlows,
  socialPages,
  webhookDeliveries,
  webhookHealth,
  webhooks,
  type CursorMapKind,
} from '../../schema/d1'
import { hash53 } from '../lib/hash53'
import type { Db } from './client'
import type { Segment } from './cursor-maps'

export type MovedTable = {
  name: string
  columns: string[]
  /** Renumbered through cursor_maps: `seq` is its AUTOINCREMENT key (and rowid). */
  seq?: CursorMapKind
  /** The columns after `tenant_id` of the index a page follows (non-null), then rowid. */
  keys: string[]
}

function moved(table: SQLiteTable, keys: string[] = [], seq?: CursorMapKind): MovedTable {
  const config = getTableConfig(table)
  return { name: config.name, columns: config.columns.map((c) => c.name), keys, ...(seq ? { seq } : {}) }
}

/**
 * Every table of a tenant's own rows on a shard, parents first. Not here: `tenants` (the shard's copy of the row is
 * written from the directory, worker/shards/move.ts), `account_stats` (kept by triggers), `webhook_replays` (the
 * last hour's replay calls, a rate limit that starts again on the new shard).
 */
export const MOVED_TABLES: MovedTable[] = [
  moved(accounts),
  moved(channelConnections),
  moved(contacts),
  moved(messages, [], 'messages'),
  moved(events, [], 'events'),
  moved(auditLog, [], 'audit'),
  moved(webhooks),
  moved(webhookHealth),
  moved(webhookDeliveries, ['webhook_id', 'created_at']),
  moved(media, ['account_id']),
  moved(messageApprovals),
  moved(socialFlows),
  moved(socialPages),
  moved(idempotencyKeys),
  moved(cursorMaps),
]

/** Where a page ends: the keys and rowid of its last row. */
export type Keyset = Array<string | number>

export type Row = Record<string, unknown>
export type Page = { rows: Row[]; last: Keyset | null }

const ident = (name: string) => `"${name}"`

/** The next `limit` rows of the tenant after `after`, in the table's page order. */
export async function readPage(db: Db, t: MovedTable, tenantId: string, after: Keyset | null, limit: number): Promise<Page> {
  const order = [...t.keys.map(ident), 'rowid']
  const cols = t.columns.map(ident).join(', ')
  const past = after === null ? '' : ` AND (${order.join(', ')}) > (${order.map((_, i) => `?${i + 3}`).join(', ')})`
  const { results } = await db.$client
    .prepare(`SELECT rowid AS _rowid, ${cols} FROM ${ident(t.name)} WHERE tenant_id = ?1${past} ORDER BY ${order.join(', ')} LIMIT ?2`)
    .bind(tenantId, limit, ...(after ?? []))
    .all<Row>()
  const lastRow = results.at(-1)
  const last = lastRow ? [...t.keys.map((k) => keyValue(lastRow[k])), keyValue(lastRow._rowid)] : null
  return { rows: results.map(({ _rowid, ...row }) => row), last }
}

function keyValue(v: unknown): string | number {
  if (typeof v === 'string' || typeof v === 'number') return v
  throw new Error(`a page key is ${v === null ? 'null' : typeof v}`)
}

/** Bytes of JSON one insert carries (D1 takes up to 2 MB in one value). */
const CHUNK_BYTES = 512 * 1024

function chunks(rows: Row[]): string[] {
  const out: string[] = []
  let part: string[] = []
  let size = 0
  for (const row of rows) {
    const text = JSON.stringify(row)
    if (part.length > 0 && size + text.length > CHUNK_BYTES) {
      out.push(`[${part.join(',')}]`)
      part = []
      size = 0
    }
    part.push(text)
    size += text.length + 1
  }
  if (part.length > 0) out.push(`[${part.join(',')}]`)
  return out
}

/**
 * The statements that copy one page to the target `db` (one D1 batch: the page lands whole or not at all). A
 * renumbered table's page first records its map: its old range, and a delta that puts its first row just above the
 * highest number the target holds.
 */
export function copyStatements(db: Db, t: MovedTable, tenantId: string, placement: number, rows: Row[]): D1PreparedStatement[] {
  const first = rows[0]
  const last = rows.at(-1)
  if (!first || !last) return []
  const d1 = db.$client
  const plain = t.columns.filter((c) => c !== 'seq' || !t.seq)
  const extract = plain.map((c) => `json_extract(value, '$.${c}')`)
  const out: D1PreparedStatement[] = []
  if (t.seq) {
    const oldFirst = Number(first.seq)
    out.push(
      d1
        .prepare(
          `INSERT INTO cursor_maps (tenant_id, kind, placement, old_first, old_last, delta)
           VALUES (?1, ?2, ?3, ?4, ?5, (SELECT coalesce(max(seq), 0) + 1 FROM ${ident(t.name)}) - ?4) ON CONFLICT DO NOTHING`
        )
        .bind(tenantId, t.seq, placement, oldFirst, Number(last.seq))
    )
    const delta = `(SELECT delta FROM cursor_maps WHERE tenant_id = ?1 AND kind = ?2 AND placement = ?3 AND old_first = ?4)`
    for (const json of chunks(rows)) {
      out.push(
        d1
          .prepare(
            `INSERT INTO ${ident(t.name)} (seq, ${plain.map(ident).join(', ')})
             SELECT json_extract(value, '$.seq') + ${delta}, ${extract.join(', ')} FROM json_each(?5) WHERE true ON CONFLICT DO NOTHING`
          )
          .bind(tenantId, t.seq, placement, oldFirst, json)
      )
    }
    return out
  }
  for (const json of chunks(rows)) {
    out.push(
      d1
        .prepare(
          `INSERT INTO ${ident(t.name)} (${plain.map(ident).join(', ')}) SELECT ${extract.join(', ')} FROM json_each(?1) WHERE true ON CONFLICT DO NOTHING`
        )
        .bind(json)
    )
  }
  return out
}

/** Where a renumbered table's copy stands on the target: the last old number already copied (0: none yet). */
export async function copiedUpTo(db: Db, t: MovedTable, tenantId: string, placement: number): Promise<number> {
  if (!t.seq) return 0
  const row = await db.$client
    .prepare('SELECT coalesce(max(old_last), 0) AS n FROM cursor_maps WHERE tenant_id = ?1 AND kind = ?2 AND placement = ?3')
    .bind(tenantId, t.seq, placement)
    .first<{ n: number }>()
  return row?.n ?? 0
}

/** The maps a move recorded for one table whose old ranges reach into [from, to] (to translate a page of old rows). */
export async function segmentsBetween(db: Db, t: MovedTable, tenantId: string, placement: number, from: number, to: number): Promise<Segment[]> {
  if (!t.seq) return []
  const { results } = await db.$client
    .prepare(
      `SELECT old_first AS oldFirst, old_last AS oldLast, delta FROM cursor_maps
       WHERE tenant_id = ?1 AND kind = ?2 AND placement = ?3 AND old_last >= ?4 AND old_first <= ?5 ORDER BY old_first`
    )
    .bind(tenantId, t.seq, placement, from, to)
    .all<Segment>()
  return results
}

const MOD = 1n << 64n

/**
 * The digest of a page: the sum of each row's hash (cyrb53, lib/hash53.ts) over all its columns in a fixed order, so
 * pages may be read in any order and size. On the source side a renumbered row's `seq` is first mapped as the copy
 * stored it (`renumber`), so equal digests also prove the map.
 */
export function pageDigest(t: MovedTable, rows: Row[], renumber?: (seq: number) => number): bigint {
  let sum = 0n
  for (const row of rows) {
    const values = t.columns.map((c) => (c === 'seq' && t.seq && renumber ? renumber(Number(row[c])) : (row[c] ?? null)))
    sum = (sum + BigInt(hash53(JSON.stringify(values)))) % MOD
  }
  return sum
}

/** Deletes up to `limit` of the tenant's rows of one table; answers how many went. */
export async function deletePage(db: Db, t: Pick<MovedTable, 'name'>, tenantId: string, limit: number): Promise<number> {
  const result = await db.$client
    .prepare(`DELETE FROM ${ident(t.name)} WHERE rowid IN (SELECT rowid FROM ${ident(t.name)} WHERE tenant_id = ?1 LIMIT ?2)`)
    .bind(tenantId, limit)
    .run()
  return result.meta.changes
}

export type StatsRow = { accountId: string; messageCount: number; lastInboundAt: number | null; lastOutboundAt: number | null }

/** The tenant's `account_stats` rows, by account. */
export async function statsOf(db: Db, tenantId: string): Promise<StatsRow[]> {
  const { results } = await db.$client
    .prepare(
      `SELECT account_id AS accountId, message_count AS messageCount, last_inbound_at AS lastInboundAt, last_outbound_at AS lastOutboundAt
       FROM account_stats WHERE tenant_id = ?1 ORDER BY account_id`
    )
    .bind(tenantId)
    .all<StatsRow>()
  return results
}

/**
 * Carries the source's last-message times to the target's figures (the copied rows counted themselves): a time whose
 * message retention already deleted is known only there. Counts are left to the triggers.
 */
export function carryStatsStatements(db: Db, tenantId: string, rows: StatsRow[]): D1PreparedStatement[] {
  return rows.map((r) =>
    db.$client
      .prepare(
        `INSERT INTO account_stats (tenant_id, account_id, message_count, last_inbound_at, last_outbound_at) VALUES (?1, ?2, 0, ?3, ?4)
         ON CONFLICT (tenant_id, account_id) DO UPDATE SET
           last_inbound_at = coalesce(max(last_inbound_at, excluded.last_inbound_at), last_inbound_at, excluded.last_inbound_at),
           last_outbound_at = coalesce(max(last_outbound_at, excluded.last_outbound_at), last_outbound_at, excluded.last_outbound_at)`
      )
      .bind(tenantId, r.accountId, r.lastInboundAt, r.lastOutboundAt)
  )
}

/** Removes the tenant's figures once its messages left this shard (each delete uncounted itself down to zero). */
export async function dropZeroStats(db: Db, tenantId: string): Promise<number> {
  const result = await db.$client.prepare('DELETE FROM account_stats WHERE tenant_id = ?1 AND message_count = 0').bind(tenantId).run()
  return result.meta.changes
}

/**
 * The accounts whose Durable Objects may write the tenant's rows: every account, and those of removed accounts that
 * still deliver webhooks of their last events. Each is told when a move begins and ends.
 */
export async function accountObjectsOf(db: Db, tenantId: string): Promise<string[]> {
  const { results } = await db.$client
    .prepare(
      `SELECT id FROM accounts WHERE tenant_id = ?1
       UNION SELECT account_id FROM webhook_deliveries WHERE tenant_id = ?1 AND status = 'pending'
       UNION SELECT account_id FROM events WHERE tenant_id = ?1 AND dispatched_at IS NULL`
    )
    .bind(tenantId)
    .all<{ id: string }>()
  return results.map((r) => r.id)
}
