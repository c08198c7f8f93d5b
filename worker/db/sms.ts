/** Queries the SMS channel needs beyond the shared ones: an opt-out set by the provider, last message times. */
import { and, eq } from 'drizzle-orm'
import { contacts } from '../../schema/d1'
import { accountFigures } from './account-stats'
import type { Db } from './client'

/** Provider error 21610 (the person texted STOP at the provider): the contact is opted out from now on. */
export function setContactOptedOut(db: Db, tenantId: string, contactId: string, optedOut: boolean, now: number) {
  return db
    .update(contacts)
    .set({ optedOut, updatedAt: now })
    .where(and(eq(contacts.tenantId, tenantId), eq(contacts.id, contactId)))
}

/** When the account last received and last sent a message (epoch ms, null when never): one row read. */
export async function lastMessageTimes(db: Db, tenantId: string, accountId: string): Promise<{ inbound: number | null; outbound: number | null }> {
  const figures = await accountFigures(db, tenantId, accountId)
  return { inbound: figures.lastInboundAt, outbound: figures.lastOutboundAt }
}
