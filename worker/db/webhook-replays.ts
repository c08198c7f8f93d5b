/**
 * Replay calls per subscription (issue 14 §2): one in flight per subscription and REPLAYS_PER_HOUR per hour, decided
 * in one conditional insert so two concurrent calls cannot both pass. A call that dies without finishing stops
 * counting as in flight after REPLAY_LEASE_MS.
 */
import { sql } from 'drizzle-orm'
import { REPLAYS_PER_HOUR } from '../lib/abuse-limits'
import { newId } from '../lib/ids'
import type { Db } from './client'

export { REPLAYS_PER_HOUR }
export const REPLAY_LEASE_MS = 60_000
const HOUR_MS = 3_600_000

export type ReplayStart = { ok: true; id: string } | { ok: false; reason: 'in_flight' | 'quota'; retryAfterS: number }

export async function startReplay(db: Db, webhookId: string, now: number): Promise<ReplayStart> {
  const id = newId('rpl')
  const hourAgo = now - HOUR_MS
  await db.run(sql`DELETE FROM webhook_replays WHERE webhook_id = ${webhookId} AND started_at <= ${hourAgo}`)
  const inserted = await db.all<{ id: string }>(sql`
    INSERT INTO webhook_replays (id, webhook_id, started_at)
    SELECT ${id}, ${webhookId}, ${now}
    WHERE NOT EXISTS (SELECT 1 FROM webhook_replays WHERE webhook_id = ${webhookId} AND finished_at IS NULL AND started_at > ${now - REPLAY_LEASE_MS})
      AND (SELECT count(*) FROM webhook_replays WHERE webhook_id = ${webhookId} AND started_at > ${hourAgo}) < ${REPLAYS_PER_HOUR}
    RETURNING id`)
  if (inserted.length > 0) return { ok: true, id }
  const running = await db.all<{ started_at: number }>(
    sql`SELECT started_at FROM webhook_replays WHERE webhook_id = ${webhookId} AND finished_at IS NULL AND started_at > ${now - REPLAY_LEASE_MS} LIMIT 1`
  )
  if (running[0]) return { ok: false, reason: 'in_flight', retryAfterS: Math.max(1, Math.ceil((running[0].started_at + REPLAY_LEASE_MS - now) / 1000)) }
  const oldest = await db.all<{ started_at: number }>(
    sql`SELECT min(started_at) AS started_at FROM webhook_replays WHERE webhook_id = ${webhookId} AND started_at > ${hourAgo}`
  )
  return { ok: false, reason: 'quota', retryAfterS: Math.max(1, Math.ceil(((oldest[0]?.started_at ?? now) + HOUR_MS - now) / 1000)) }
}

export async function finishReplay(db: Db, id: string, now: number): Promise<void> {
  await db.run(sql`UPDATE webhook_replays SET finished_at = ${now} WHERE id = ${id}`)
}
