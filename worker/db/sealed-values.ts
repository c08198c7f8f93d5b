/**
 * Every sealed column as rows to re-seal (POST /admin/secrets/reseal): where each column's row key is, a page of
 * values not sealed under the current key in key order, a conditional update, and the count still to do. The
 * column and table names come from the constant table below, never from input. The walk goes shard by shard
 * (db/shards.ts): shard 0 is the directory's database, so its page-inbox apps and flows are walked there.
 */
import { currentPrefix, seal, SEALED_COLUMNS, unseal, type Keyring, type SealedAt, type SealedColumn } from '../lib/sealed'

type Place = { table: string; column: string; rowKey: string }

/** Each sealed column's table and the column that, with tenant_id, names its row (lib/sealed.ts `SealedAt`). */
export const SEALED_PLACES: Record<SealedColumn, Place> = {
  'webhooks.signing_secret': { table: 'webhooks', column: 'signing_secret', rowKey: 'id' },
  'channel_connections.config': { table: 'channel_connections', column: 'config', rowKey: 'account_id' },
  'social_apps.secret': { table: 'social_apps', column: 'secret', rowKey: 'tenant_id' },
  'social_flows.pages': { table: 'social_flows', column: 'pages', rowKey: 'id' },
  'social_pages.token': { table: 'social_pages', column: 'token', rowKey: 'account_id' },
  'idempotency_keys.response': { table: 'idempotency_keys', column: 'response', rowKey: 'key_hash' },
}

export type SealedValue = { at: SealedAt; value: string }

/** Rows of `column` after (tenantId, rowId), in key order, whose value does not start with `currentPrefix`. */
export async function sealedValuesToReseal(
  db: D1Database,
  column: SealedColumn,
  currentPrefix: string,
  after: { tenantId: string; rowId: string } | null,
  limit: number
): Promise<SealedValue[]> {
  const p = SEALED_PLACES[column]
  const { results } = await db
    .prepare(
      `SELECT tenant_id AS t, ${p.rowKey} AS r, ${p.column} AS v FROM ${p.table}
       WHERE ${p.column} IS NOT NULL AND substr(${p.column}, 1, ?1) <> ?2 AND (tenant_id, ${p.rowKey}) > (?3, ?4)
       ORDER BY tenant_id, ${p.rowKey} LIMIT ?5`
    )
    .bind(currentPrefix.length, currentPrefix, after?.tenantId ?? '', after?.rowId ?? '', limit)
    .all<{ t: string; r: string; v: string }>()
  return results.map((row) => ({ at: { column, tenantId: row.t, rowId: row.r }, value: row.v }))
}

/** Replaces a sealed value only if it is still the one read: a write in between (sealed under the current key) wins. */
export function resealStatement(db: D1Database, at: SealedAt, from: string, to: string): D1PreparedStatement {
  const p = SEALED_PLACES[at.column]
  return db
    .prepare(`UPDATE ${p.table} SET ${p.column} = ?1 WHERE tenant_id = ?2 AND ${p.rowKey} = ?3 AND ${p.column} = ?4`)
    .bind(to, at.tenantId, at.rowId, from)
}

/** How many values of `column` are not sealed under the current key yet. */
export async function countNotCurrent(db: D1Database, column: SealedColumn, currentPrefix: string): Promise<number> {
  const p = SEALED_PLACES[column]
  const row = await db
    .prepare(`SELECT count(*) AS n FROM ${p.table} WHERE ${p.column} IS NOT NULL AND substr(${p.column}, 1, ?1) <> ?2`)
    .bind(currentPrefix.length, currentPrefix)
    .first<{ n: number }>()
  return row?.n ?? 0
}

export type ResealPosition = { shard: number; column: SealedColumn; after: { tenantId: string; rowId: string } | null }

export type ResealPage = {
  resealed: number
  /** Values that open under no key of the ring: left as they are, reported, and passed over. */
  unreadable: Array<{ at: SealedAt; error: string }>
  /** Where the next page starts; null when every column was walked. */
  next: ResealPosition | null
}

/**
 * Re-seals up to `limit` values from `from` on, column after column and shard after shard, under the current key:
 * each is opened (any key of the ring, or the v1 format) and sealed again for the same place, then written only if
 * unchanged since the read. Idempotent (values already under the current key are not selected) and resumable from
 * any position.
 */
export async function resealPage(shards: readonly D1Database[], ring: Keyring, from: ResealPosition, limit: number): Promise<ResealPage> {
  const prefix = currentPrefix(ring)
  const out: ResealPage = { resealed: 0, unreadable: [], next: null }
  let position: ResealPosition | null = from
  let left = limit
  while (position && left > 0) {
    const db = shards[position.shard]
    if (!db) {
      position = null
      break
    }
    const rows = await sealedValuesToReseal(db, position.column, prefix, position.after, left)
    const writes: D1PreparedStatement[] = []
    for (const row of rows) {
      try {
        writes.push(resealStatement(db, row.at, row.value, await seal(ring, row.at, await unseal(ring, row.at, row.value))))
      } catch (err) {
        out.unreadable.push({ at: row.at, error: err instanceof Error ? err.message : String(err) })
      }
    }
    if (writes.length > 0) out.resealed += (await db.batch(writes)).reduce((n, r) => n + (r.meta.changes ?? 0), 0)
    left -= rows.length
    const last = rows.at(-1)
    if (last && left === 0) position = { ...position, after: { tenantId: last.at.tenantId, rowId: last.at.rowId } }
    else position = nextColumn(position, shards.length)
  }
  out.next = position
  return out
}

function nextColumn(p: ResealPosition, shardCount: number): ResealPosition | null {
  const next = SEALED_COLUMNS[SEALED_COLUMNS.indexOf(p.column) + 1]
  if (next) return { shard: p.shard, column: next, after: null }
  return p.shard + 1 < shardCount ? { shard: p.shard + 1, column: SEALED_COLUMNS[0], after: null } : null
}

export const RESEAL_START: ResealPosition = { shard: 0, column: SEALED_COLUMNS[0], after: null }
