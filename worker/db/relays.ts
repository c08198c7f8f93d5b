/** Relay tokens: `rly_` + 40 base62 characters, shown once, stored only as a SHA-256 hash (like API keys). */
import { and, asc, eq, isNotNull, isNull } from 'drizzle-orm'
import { relays } from '../../schema/d1'
import { randomBase62, sha256Hex } from '../lib/crypto'
import { newId } from '../lib/ids'
import type { Db } from './client'

export const RELAY_TOKEN_PREFIX = 'rly_'
const RELAY_TOKEN_RANDOM_CHARS = 40
const DISPLAY_PREFIX_CHARS = RELAY_TOKEN_PREFIX.length + 4

export type RelayRow = typeof relays.$inferSelect
export type IssuedRelay = { row: RelayRow; token: string }

export async function issueRelayToken(db: Db, tenantId: string | null, name: string | null, now: number): Promise<IssuedRelay> {
  const token = RELAY_TOKEN_PREFIX + randomBase62(RELAY_TOKEN_RANDOM_CHARS)
  const row: RelayRow = {
    id: newId('rly', 20),
    tenantId,
    name,
    hash: await sha256Hex(token),
    prefix: token.slice(0, DISPLAY_PREFIX_CHARS),
    createdAt: now,
    revokedAt: null,
  }
  await db.insert(relays).values(row)
  return { row, token }
}

/** The live (unrevoked) relay a token belongs to, or undefined. Strings that do not look like tokens skip the query. */
export async function relayForToken(db: Db, token: string): Promise<RelayRow | undefined> {
  if (!token.startsWith(RELAY_TOKEN_PREFIX) || token.length > 200) return undefined
  return db
    .select()
    .from(relays)
    .where(and(eq(relays.hash, await sha256Hex(token)), isNull(relays.revokedAt)))
    .get()
}

export async function listRelays(db: Db): Promise<RelayRow[]> {
  return db.select().from(relays).where(isNull(relays.revokedAt)).orderBy(asc(relays.createdAt), asc(relays.id))
}

/** Revokes a token; answers the row when a live one had that id. */
export async function revokeRelay(db: Db, id: string, now: number): Promise<RelayRow | undefined> {
  const [row] = await db
    .update(relays)
    .set({ revokedAt: now })
    .where(and(eq(relays.id, id), isNull(relays.revokedAt)))
    .returning()
  return row
}

/** Tenants that run relays of their own: their accounts go to those relays only, never to the service's. */
export async function tenantsWithOwnRelays(db: Db): Promise<Set<string>> {
  const rows = await db
    .selectDistinct({ tenantId: relays.tenantId })
    .from(relays)
    .where(and(isNotNull(relays.tenantId), isNull(relays.revokedAt)))
  return new Set(rows.flatMap((r) => (r.tenantId ? [r.tenantId] : [])))
}
