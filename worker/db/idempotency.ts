/**
 * Idempotency keys in D1 (docs/idempotency.md): claiming a key and reading who holds it in one batch (one round
 * trip, one transaction), storing or dropping the first request's answer, and the cron's prune. Rows are keyed by
 * tenant, so they move with the tenant's data when D1 is split per tenant.
 */
import { and, eq, lte, or, sql } from 'drizzle-orm'
import { idempotencyKeys } from '../../schema/d1'
import type { Db } from './client'
import { unfenced } from './fences'

/** The first answer is replayed this long (Stripe's and the IETF draft's usual day). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000
/**
 * How long a request that never finished (its isolate died) holds its key; longer than any creating route runs (a
 * beta login step waits up to 20 s for the relay, a provider check 10 s). A retry after it with the same request
 * runs again.
 */
export const IDEMPOTENCY_LEASE_MS = 60_000
/** Rows the cron deletes per run at most; a minute's run stays short whatever piled up. */
export const IDEMPOTENCY_PRUNE_BATCH = 1_000

export type IdempotencyRecord = {
  fingerprint: string
  claim: string
  status: number | null
  response: string | null
  lockedUntil: number | null
}

export type ClaimRequest = { tenantId: string; keyHash: string; fingerprint: string; claim: string; now: number }

/**
 * Takes the key for this request, or reads who holds it. The insert wins when the key is new, when its last answer
 * expired, or when an earlier run of the same request died holding it (its lease lapsed); otherwise the row is left
 * as it is and the caller compares its own claim with the one read.
 */
export async function claimIdempotencyKey(db: Db, r: ClaimRequest): Promise<IdempotencyRecord> {
  const held = and(eq(idempotencyKeys.tenantId, r.tenantId), eq(idempotencyKeys.keyHash, r.keyHash))
  const [, rows] = await db.batch([
    db
      .insert(idempotencyKeys)
      .values({
        tenantId: r.tenantId,
        keyHash: r.keyHash,
        fingerprint: r.fingerprint,
        claim: r.claim,
        lockedUntil: r.now + IDEMPOTENCY_LEASE_MS,
        expiresAt: r.now + IDEMPOTENCY_TTL_MS,
      })
      .onConflictDoUpdate({
        target: [idempotencyKeys.tenantId, idempotencyKeys.keyHash],
        set: {
          fingerprint: r.fingerprint,
          claim: r.claim,
          status: null,
          response: null,
          lockedUntil: r.now + IDEMPOTENCY_LEASE_MS,
          expiresAt: r.now + IDEMPOTENCY_TTL_MS,
        },
        setWhere: or(
          lte(idempotencyKeys.expiresAt, r.now),
          and(sql`${idempotencyKeys.status} IS NULL`, lte(idempotencyKeys.lockedUntil, r.now), eq(idempotencyKeys.fingerprint, r.fingerprint))
        ),
      }),
    db
      .select({
        fingerprint: idempotencyKeys.fingerprint,
        claim: idempotencyKeys.claim,
        status: idempotencyKeys.status,
        response: idempotencyKeys.response,
        lockedUntil: idempotencyKeys.lockedUntil,
      })
      .from(idempotencyKeys)
      .where(held),
  ])
  const row = rows[0]
  if (!row) throw new Error('idempotency key row missing right after its upsert')
  return row
}

const heldBy = (tenantId: string, keyHash: string, claim: string) =>
  and(eq(idempotencyKeys.tenantId, tenantId), eq(idempotencyKeys.keyHash, keyHash), eq(idempotencyKeys.claim, claim))

/** Keeps the first answer (sealed by the caller) for the rest of the key's day; only the claim's holder writes. */
export async function storeIdempotentAnswer(db: Db, tenantId: string, keyHash: string, claim: string, status: number, response: string): Promise<void> {
  await db
    .update(idempotencyKeys)
    .set({ status, response, lockedUntil: null })
    .where(heldBy(tenantId, keyHash, claim))
}

/** Frees the key of a request whose answer is not kept (a 429 or 5xx: nothing was done, a retry runs again). */
export async function releaseIdempotencyKey(db: Db, tenantId: string, keyHash: string, claim: string): Promise<void> {
  await db.delete(idempotencyKeys).where(heldBy(tenantId, keyHash, claim))
}

/** The cron's step: deletes up to `limit` expired keys, oldest first, through the expiry index; answers how many. */
export async function pruneIdempotencyKeys(db: Db, now: number, limit = IDEMPOTENCY_PRUNE_BATCH): Promise<number> {
  const rows = await db.all<{ n: number }>(
    sql`DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE expires_at <= ${now} AND ${unfenced(idempotencyKeys.tenantId)} ORDER BY expires_at LIMIT ${limit}) RETURNING 1 AS n`
  )
  return rows.length
}
