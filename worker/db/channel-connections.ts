/**
 * Per-account channel settings, sealed (lib/sealed.ts) because they hold secrets; a config opens only on its own
 * (tenant, account) row.
 */
import { and, eq } from 'drizzle-orm'
import type { z } from 'zod'
import { channelConnections } from '../../schema/d1'
import { seal, unseal, type Keyring, type SealedAt } from '../lib/sealed'
import type { Db } from './client'

export async function readConnectionConfig<S extends z.ZodType>(
  db: Db,
  ring: Keyring,
  tenantId: string,
  accountId: string,
  shape: S
): Promise<z.infer<S> | undefined> {
  const row = await db
    .select({ config: channelConnections.config })
    .from(channelConnections)
    .where(and(eq(channelConnections.tenantId, tenantId), eq(channelConnections.accountId, accountId)))
    .get()
  return row ? shape.parse(JSON.parse(await unseal(ring, connectionSealedAt(tenantId, accountId), row.config))) : undefined
}

/** Seals a config for `upsertConnectionConfig` (kept apart because a query builder must not come out of a Promise: it is a thenable and would run). */
export function sealConnectionConfig(ring: Keyring, tenantId: string, accountId: string, config: unknown): Promise<string> {
  return seal(ring, connectionSealedAt(tenantId, accountId), JSON.stringify(config))
}

export function connectionSealedAt(tenantId: string, accountId: string): SealedAt {
  return { column: 'channel_connections.config', tenantId, rowId: accountId }
}

/** A statement (for a D1 batch) storing an already sealed config. */
export function upsertConnectionConfig(db: Db, tenantId: string, accountId: string, kind: string, sealed: string, now: number) {
  return db
    .insert(channelConnections)
    .values({ tenantId, accountId, kind, config: sealed, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: [channelConnections.tenantId, channelConnections.accountId], set: { config: sealed, kind, updatedAt: now } })
}

export function deleteConnectionConfig(db: Db, tenantId: string, accountId: string) {
  return db.delete(channelConnections).where(and(eq(channelConnections.tenantId, tenantId), eq(channelConnections.accountId, accountId)))
}
