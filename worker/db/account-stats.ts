/**
 * Per-account message figures (schema/d1.ts `account_stats`): kept by triggers inside the statements that insert and
 * delete messages, so a status answer reads one row, however long the history.
 */
import { and, eq } from 'drizzle-orm'
import { accountStats } from '../../schema/d1'
import type { Db } from './client'

export type AccountFigures = { messageCount: number; lastInboundAt: number | null; lastOutboundAt: number | null }

const NONE: AccountFigures = { messageCount: 0, lastInboundAt: null, lastOutboundAt: null }

export async function accountFigures(db: Db, tenantId: string, accountId: string): Promise<AccountFigures> {
  const row = await db
    .select({ messageCount: accountStats.messageCount, lastInboundAt: accountStats.lastInboundAt, lastOutboundAt: accountStats.lastOutboundAt })
    .from(accountStats)
    .where(and(eq(accountStats.tenantId, tenantId), eq(accountStats.accountId, accountId)))
    .get()
  return row ?? NONE
}
