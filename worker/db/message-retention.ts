/**
 * Message retention in D1 (docs/api.md, "Retention and archive"): which tenants the sweep visits next (the
 * directory's tenants) and what a sweep step deletes (on the tenant's shard). Every statement takes the `Db` it runs
 * on, and each step touches one tenant's rows, so a step runs on whichever database holds that tenant. Lists of ids travel as one JSON parameter (db/json-list.ts): a step
 * handles up to 500 messages, D1 binds at most 100 parameters.
 */
import { and, asc, eq, isNull, lt, sql } from 'drizzle-orm'
import { contacts, media, messages, tenants } from '../../schema/d1'
import type { Db } from './client'
import { inJsonList } from './json-list'

/** Days messages are kept when the admin set nothing for the tenant. */
export const DEFAULT_MESSAGE_RETENTION_DAYS = 90

/** The retention in force: the tenant's own setting, else the default; 0 keeps messages forever. */
export function retentionDays(stored: number | null): number {
  return stored ?? DEFAULT_MESSAGE_RETENTION_DAYS
}

export type RetentionTenant = { id: string; retentionDays: number; shard: number }

/**
 * Tenants (in the directory) whose last visit ended before `checkedBefore`, longest ago first, with their shard. A
 * tenant being moved waits: its old shard refuses its deletes, and its rows are being copied.
 */
export async function retentionDue(dir: Db, checkedBefore: number, limit: number): Promise<RetentionTenant[]> {
  const rows = await dir
    .select({ id: tenants.id, stored: tenants.messageRetentionDays, shard: tenants.shard })
    .from(tenants)
    .where(and(lt(tenants.retentionCheckedAt, checkedBefore), isNull(tenants.movingTo)))
    .orderBy(asc(tenants.retentionCheckedAt))
    .limit(limit)
  return rows.map((r) => ({ id: r.id, retentionDays: retentionDays(r.stored), shard: r.shard }))
}

export async function markRetentionChecked(dir: Db, tenantId: string, at: number): Promise<void> {
  await dir.update(tenants).set({ retentionCheckedAt: at }).where(eq(tenants.id, tenantId))
}

/** A statement deleting messages by seq (the account figures follow by trigger). */
export function deleteMessagesStatement(db: Db, seqs: readonly number[]) {
  return db.delete(messages).where(inJsonList(messages.seq, seqs))
}

/** A statement deleting media rows by id (their objects go first, as in media/retention.ts). */
export function deleteMediaRowsStatement(db: Db, mediaIds: readonly string[]) {
  return db.delete(media).where(inJsonList(media.id, mediaIds))
}

/**
 * A statement deleting those of `contactIds` that no message refers to any more and that carry nothing a limit or a
 * person's wish rests on; answers the ids it deleted. The rule (docs/api.md, "Retention and archive"):
 * - no flag: opted out, do-not-disturb, private and AI-paused contacts are kept, or a STOP would be forgotten;
 * - created and last changed before the cutoff (an import or a name refresh keeps a contact);
 * - its last inbound message is older than every message this step deleted (`inboundBefore`), so all of its
 *   inbound messages are gone (they are deleted oldest first);
 * - no outbound message to it remains (the outbound index answers without reading the history).
 * The AccountDO's guard state (loop guard, first contact, opener window) is keyed by the contact id, which is
 * derived from the address, and is not touched: a person who writes again gets the same id and the same limits.
 */
export function pruneContactsStatement(db: Db, tenantId: string, contactIds: readonly string[], cutoff: number, inboundBefore: number) {
  const outbound = sql`exists (select 1 from ${messages} where ${messages.tenantId} = ${contacts.tenantId}
    and ${messages.accountId} = ${contacts.accountId} and ${messages.contactId} = ${contacts.id} and ${messages.direction} = 'outbound')`
  return db
    .delete(contacts)
    .where(
      and(
        // The unary + keeps the planner on the primary key for the id list instead of walking the tenant's contacts.
        sql`+${contacts.tenantId} = ${tenantId}`,
        inJsonList(contacts.id, contactIds),
        eq(contacts.optedOut, false),
        eq(contacts.doNotDisturb, false),
        eq(contacts.private, false),
        eq(contacts.aiPaused, false),
        lt(contacts.createdAt, cutoff),
        lt(contacts.updatedAt, cutoff),
        sql`coalesce(${contacts.lastInboundAt}, 0) < ${inboundBefore}`,
        sql`not ${outbound}`
      )
    )
    .returning({ id: contacts.id })
}
