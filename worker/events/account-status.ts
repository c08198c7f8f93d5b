/**
 * An account's status moves with its `account.*` event and `connected_at` (spec 2 and 3): the statements, for the
 * caller to commit in its own batch. Pure, so both sides use it: the channels' routes in the Worker
 * (channels/lifecycle.ts and each channel's connect) and the AccountDO's session code (account/session/).
 */
import type { BatchItem } from 'drizzle-orm/batch'
import { sql } from 'drizzle-orm'
import { accounts, type AccountStatus } from '../../schema/d1'
import { accountStatusUpdate, type AccountRow } from '../db/accounts'
import type { Db } from '../db/client'
import { insertEventIfAccount } from '../db/events'
import { accountEventPayload } from './payloads'

const EVENT_FOR: Partial<Record<AccountStatus, 'account.connected' | 'account.disconnected' | 'account.restricted'>> = {
  connected: 'account.connected',
  disconnected: 'account.disconnected',
  restricted: 'account.restricted',
}

export type StatusChange = {
  /** The account as it is after the change. */
  account: AccountRow
  /** The update and, when the status itself changed, its event: commit them in one batch. Empty: nothing changes. */
  statements: BatchItem<'sqlite'>[]
}

/**
 * The statements that move an account to `to` (with its reason) and emit the matching `account.*` event when the
 * status changes (decided again by the row when the batch runs). `connected_at` is set when it becomes connected and kept while it stays so; null otherwise.
 */
export function statusChange(db: Db, account: AccountRow, to: AccountStatus, reason: string | null, now: number, identifier?: string): StatusChange {
  const sameIdentifier = identifier === undefined || identifier === account.identifier
  if (account.status === to && account.statusReason === reason && sameIdentifier) return { account, statements: [] }
  const connectedAt = to === 'connected' ? (account.status === 'connected' ? (account.connectedAt ?? now) : now) : null
  const moved: AccountRow = { ...account, status: to, statusReason: reason, connectedAt, identifier: identifier ?? account.identifier, updatedAt: now }
  const update = accountStatusUpdate(db, account.tenantId, account.id, { status: to, reason, now, connectedAt, ...(identifier ? { identifier } : {}) })
  const event = EVENT_FOR[to]
  if (!event || account.status === to) return { account: moved, statements: [update] }
  // The event goes first and only if the row is not already `to` when the batch runs: a concurrent request that read
  // the same old status and committed the same move before this one has emitted it already.
  const row = sql`${accounts.tenantId} = ${account.tenantId} and ${accounts.id} = ${account.id} and ${accounts.status} <> ${to}`
  const emitted = insertEventIfAccount(db, account.tenantId, account.id, accountEventPayload(event, moved, reason, now), now, row)
  return { account: moved, statements: [emitted, update] }
}
