/** Connected-account queries. The plan's account cap is enforced inside the insert itself, so it holds under races. */
import { and, asc, eq, getTableColumns, sql } from 'drizzle-orm'
import { accounts, tenants, type AccountStatus, type Channel } from '../../schema/d1'
import type { Db } from './client'
import type { Tenant } from './tenants'
import { compiled, placeholders, rawRowReader } from './compiled'
import { constantRow } from './constant-row'

export type AccountRow = typeof accounts.$inferSelect

type TenantIdValues = { tenantId: string }
const readAccount = rawRowReader(accounts)

const tenantAccounts = compiled<TenantIdValues>((db) =>
  db.select().from(accounts).where(eq(accounts.tenantId, placeholders<TenantIdValues>().tenantId)).orderBy(asc(accounts.createdAt), asc(accounts.id))
)

/**
 * The tenant's accounts, oldest first. Compiled once per isolate (db/compiled.ts): every long-poll answer reads them,
 * and building the query with Drizzle per call cost more CPU than D1 spent running it.
 */
export async function listAccounts(db: Db, tenantId: string): Promise<AccountRow[]> {
  const rows = await tenantAccounts(db).bind(db, { tenantId }).raw()
  return rows.map((r) => readAccount(r, 0))
}

/**
 * One statement for both: the tenant id as a one-row table, the tenant row and its accounts left-joined to it, so the
 * tenant's columns and each account's follow each other in one raw row (the tenant's repeated per account, all null
 * when the row is gone; the account's all null when it has none). Half the work of a two-statement batch for D1.
 */
const tenantWithAccounts = compiled<TenantIdValues>((db) =>
  db
    .select({ tenant: tenants, account: accounts })
    .from(sql`(select ${placeholders<TenantIdValues>().tenantId} as id) as k`)
    .leftJoin(tenants, sql`${tenants.id} = k.id`)
    .leftJoin(accounts, sql`${accounts.tenantId} = k.id`)
    .orderBy(asc(accounts.createdAt), asc(accounts.id))
)
const TENANT_KEYS = Object.keys(getTableColumns(tenants))
const ACCOUNT_KEYS = Object.keys(getTableColumns(accounts))
/** Where each side's `id` sits in a raw row; a stored row's id is never null, so a null one is the missing side. */
const TENANT_ID_AT = TENANT_KEYS.indexOf('id')
const ACCOUNT_ID_AT = TENANT_KEYS.length + ACCOUNT_KEYS.indexOf('id')
const readTenant = rawRowReader(tenants)

/**
 * The tenant row read fresh (not from the auth cache) together with its accounts, in one round trip: a send must
 * see a suspension or plan change the moment it is written, even by another isolate or a Durable Object. On every
 * authenticated read and send, so its statement is compiled once per isolate (db/compiled.ts): building the
 * queries with Drizzle per call was about a fifth of a bare GET /v1/usage's CPU.
 */
export async function tenantAndAccounts(db: Db, tenantId: string): Promise<{ tenant: Tenant | undefined; accounts: AccountRow[] }> {
  const rows = await tenantWithAccounts(db).bind(db, { tenantId }).raw()
  const first = rows[0]
  const tenant = first && first[TENANT_ID_AT] !== null ? readTenant(first, 0) : undefined
  const list = rows.filter((r) => r[ACCOUNT_ID_AT] !== null).map((r) => readAccount(r, TENANT_KEYS.length))
  return { tenant, accounts: list }
}

export async function getAccount(db: Db, tenantId: string, id: string): Promise<AccountRow | undefined> {
  return db
    .select()
    .from(accounts)
    .where(and(eq(accounts.tenantId, tenantId), eq(accounts.id, id)))
    .get()
}

export type NewAccount = {
  tenantId: string
  id: string
  channel: Channel
  identifier: string
  status: AccountStatus
  connectedAt: number | null
  now: number
}

/**
 * Spec 1/8 "1 connected account": the cap counts the accounts that hold a place, connected or being connected (and
 * restricted ones, which stay linked); a disconnected account does not block connecting another.
 */
const holdsPlace = (tenantId: string, exceptId: string) =>
  sql`(select count(*) from ${accounts} where ${accounts.tenantId} = ${tenantId} and ${accounts.id} <> ${exceptId} and ${accounts.status} <> 'disconnected')`

/**
 * Adds an account unless the tenant's accounts already fill `cap` places. Answers false when the cap refused it
 * (or the id exists). The count and the insert are one statement, so two racing connects cannot both slip under.
 */
export async function insertAccountWithinCap(db: Db, a: NewAccount, cap: number): Promise<boolean> {
  const rows = await db
    .insert(accounts)
    .select(
      db
        .select(
          constantRow(accounts, {
            tenantId: a.tenantId,
            id: a.id,
            channel: a.channel,
            identifier: a.identifier,
            status: a.status,
            connectedAt: a.connectedAt,
            createdAt: a.now,
            updatedAt: a.now,
          })
        )
        .from(tenants)
        .where(and(eq(tenants.id, a.tenantId), sql`${holdsPlace(a.tenantId, a.id)} < ${cap}`))
    )
    .onConflictDoNothing()
    .returning({ id: accounts.id })
  return rows.length > 0
}

/**
 * Moves a disconnected account back to `connecting` under the same cap rule, in one statement (a concurrent
 * connect of another account cannot slip past it). Answers false when the cap refused it.
 */
export async function reviveAccountWithinCap(db: Db, tenantId: string, id: string, cap: number, now: number): Promise<boolean> {
  const rows = await db
    .update(accounts)
    .set({ status: 'connecting', statusReason: null, connectedAt: null, updatedAt: now })
    .where(and(eq(accounts.tenantId, tenantId), eq(accounts.id, id), eq(accounts.status, 'disconnected'), sql`${holdsPlace(tenantId, id)} < ${cap}`))
    .returning({ id: accounts.id })
  return rows.length > 0
}

export type AccountStatusPatch = {
  status: AccountStatus
  reason: string | null
  identifier?: string
  connectedAt?: number | null
  now: number
}

/**
 * A statement (for a D1 batch) moving an account to a new status. Spec 2: `connected_at` is null in every state but
 * `connected`; a patch to `connected` names the time it became connected.
 */
export function accountStatusUpdate(db: Db, tenantId: string, id: string, p: AccountStatusPatch) {
  const values: Partial<AccountRow> = { status: p.status, statusReason: p.reason, updatedAt: p.now }
  if (p.identifier !== undefined) values.identifier = p.identifier
  // A row already connected keeps the time it connected, also when a concurrent request read it before that.
  const connectedAt =
    p.status === 'connected'
      ? sql`case when ${accounts.status} = 'connected' and ${accounts.connectedAt} is not null then ${accounts.connectedAt} else ${p.connectedAt ?? p.now} end`
      : null
  return db
    .update(accounts)
    .set({ ...values, connectedAt })
    .where(and(eq(accounts.tenantId, tenantId), eq(accounts.id, id)))
}

/** Accounts restricted by a safety limit go back to connected when the service lifts the tenant's suspension. */
export async function restoreRestrictedAccounts(db: Db, tenantId: string, reason: string, now: number): Promise<AccountRow[]> {
  return db
    .update(accounts)
    .set({ status: 'connected', statusReason: null, connectedAt: now, updatedAt: now })
    .where(and(eq(accounts.tenantId, tenantId), eq(accounts.status, 'restricted'), eq(accounts.statusReason, reason)))
    .returning()
}

/**
 * A statement (for a D1 batch) deleting an account row, so its `account.disconnected` event commits with it; its
 * messages stay as history.
 */
export function deleteAccountStatement(db: Db, tenantId: string, id: string) {
  return db.delete(accounts).where(and(eq(accounts.tenantId, tenantId), eq(accounts.id, id)))
}
