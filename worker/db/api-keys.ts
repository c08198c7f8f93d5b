/**
 * API keys: `svc_live_` + 40 base62 characters, shown once, stored only as a SHA-256 hash, with the grant that
 * narrows what the key may do (its rules: worker/safety/grant.ts).
 */
import { and, desc, eq, isNull, sql } from 'drizzle-orm'
import { z } from 'zod'
import { apiKeys, tenants } from '../../schema/d1'
import { randomBase62, sha256Hex } from '../lib/crypto'
import { newId } from '../lib/ids'
import type { KeyGrant } from '../env'
import type { Db } from './client'
import type { Tenant } from './tenants'

export const API_KEY_PREFIX = 'svc_live_'
/** The reply window of a `reply` key minted without one, and of every row stored before the column existed. */
export const DEFAULT_REPLY_WINDOW_S = 24 * 3600
const API_KEY_RANDOM_CHARS = 40
const DISPLAY_PREFIX_CHARS = API_KEY_PREFIX.length + 4

export type IssuedKey = { id: string; key: string; prefix: string; tenant_id: string; created_at: number }
export type KeyRow = typeof apiKeys.$inferSelect

const AccountList = z.array(z.string())

/** The grant a stored key carries; a row written before scopes existed reads as a full key. */
export function grantOf(row: KeyRow): KeyGrant {
  return {
    id: row.id,
    label: row.label,
    scope: row.scope,
    accounts: row.accounts === null ? null : AccountList.parse(JSON.parse(row.accounts)),
    expiresAt: row.expiresAt,
    replyWindowS: row.replyWindowS ?? DEFAULT_REPLY_WINDOW_S,
    approval: row.approval,
  }
}

export async function issueApiKey(db: Db, tenantId: string, now: number, grant?: Omit<KeyGrant, 'id'>, parentId?: string): Promise<IssuedKey> {
  const key = API_KEY_PREFIX + randomBase62(API_KEY_RANDOM_CHARS)
  const row = { id: newId('key', 20), tenantId, hash: await sha256Hex(key), prefix: key.slice(0, DISPLAY_PREFIX_CHARS), createdAt: now }
  const scoped = grant && {
    scope: grant.scope,
    label: grant.label,
    accounts: grant.accounts === null ? null : JSON.stringify(grant.accounts),
    expiresAt: grant.expiresAt,
    replyWindowS: grant.replyWindowS,
    approval: grant.approval,
    parentId: parentId ?? null,
  }
  await db.insert(apiKeys).values({ ...row, ...scoped })
  return { id: row.id, key, prefix: row.prefix, tenant_id: tenantId, created_at: now }
}

export type KeyOwner = { tenant: Tenant; grant: KeyGrant }

/**
 * The tenant owning a live (unrevoked) key and the key's grant, or undefined, with how many live keys the tenant has
 * (lib/rate-limit.ts skips tenant-wide limits that one key's own limit already holds). Keys that do not look like ours
 * skip the query. Expiry is not judged here: an expired key answers `key_expired`, not "invalid key".
 */
export async function ownerOfApiKey(db: Db, key: string): Promise<(KeyOwner & { tenantKeys: number }) | undefined> {
  if (!key.startsWith(API_KEY_PREFIX) || key.length > 200) return undefined
  const row = await db
    .select({
      tenant: tenants,
      key: apiKeys,
      tenantKeys: sql<number>`(select count(*) from api_keys as live where live.tenant_id = ${apiKeys.tenantId} and live.revoked_at is null)`,
    })
    .from(apiKeys)
    .innerJoin(tenants, eq(apiKeys.tenantId, tenants.id))
    .where(and(eq(apiKeys.hash, await sha256Hex(key)), isNull(apiKeys.revokedAt)))
    .get()
  return row && { tenant: row.tenant, grant: grantOf(row.key), tenantKeys: Number(row.tenantKeys) }
}

/** The tenant owning a live key (kept for callers that need no grant). */
export async function tenantForApiKey(db: Db, key: string): Promise<Tenant | undefined> {
  return (await ownerOfApiKey(db, key))?.tenant
}

/** The tenant's live keys, newest first (never the hash). */
export async function listApiKeys(db: Db, tenantId: string): Promise<KeyRow[]> {
  return db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.tenantId, tenantId), isNull(apiKeys.revokedAt)))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
    .all()
}

export async function getApiKey(db: Db, tenantId: string, keyId: string): Promise<KeyRow | undefined> {
  return db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.tenantId, tenantId), eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)))
    .get()
}

/** Revokes a key; answers the tenant it belonged to, or undefined when no live key has that id (within `tenantId` when given). */
export async function revokeApiKey(db: Db, keyId: string, now: number, tenantId?: string): Promise<string | undefined> {
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt), tenantId === undefined ? undefined : eq(apiKeys.tenantId, tenantId)))
    .returning({ tenantId: apiKeys.tenantId })
  return row?.tenantId
}
