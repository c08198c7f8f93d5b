/** API keys: `svc_live_` + 40 base62 characters, shown once, stored only as a SHA-256 hash. */
import { and, eq, isNull } from 'drizzle-orm'
import { apiKeys, tenants } from '../../schema/d1'
import { randomBase62, sha256Hex } from '../lib/crypto'
import { newId } from '../lib/ids'
import type { Db } from './client'
import type { Tenant } from './tenants'

export const API_KEY_PREFIX = 'svc_live_'
const API_KEY_RANDOM_CHARS = 40
const DISPLAY_PREFIX_CHARS = API_KEY_PREFIX.length + 4

export type IssuedKey = { id: string; key: string; prefix: string; tenant_id: string; created_at: number }

export async function issueApiKey(db: Db, tenantId: string, now: number): Promise<IssuedKey> {
  const key = API_KEY_PREFIX + randomBase62(API_KEY_RANDOM_CHARS)
  const row = { id: newId('key', 20), tenantId, hash: await sha256Hex(key), prefix: key.slice(0, DISPLAY_PREFIX_CHARS), createdAt: now }
  await db.insert(apiKeys).values(row)
  return { id: row.id, key, prefix: row.prefix, tenant_id: tenantId, created_at: now }
}

/** The tenant owning a live (unrevoked) key, or undefined. Keys that do not look like ours skip the query. */
export async function tenantForApiKey(db: Db, key: string): Promise<Tenant | undefined> {
  if (!key.startsWith(API_KEY_PREFIX) || key.length > 200) return undefined
  const row = await db
    .select({ tenant: tenants })
    .from(apiKeys)
    .innerJoin(tenants, eq(apiKeys.tenantId, tenants.id))
    .where(and(eq(apiKeys.hash, await sha256Hex(key)), isNull(apiKeys.revokedAt)))
    .get()
  return row?.tenant
}

/** Revokes a key; answers false when no live key has that id. */
export async function revokeApiKey(db: Db, keyId: string, now: number): Promise<boolean> {
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id })
  return rows.length > 0
}
