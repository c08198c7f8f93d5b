/** Queries the SMS channel needs beyond the shared ones: an opt-out set by the provider, last message times. */
import { and, eq, max } from 'drizzle-orm'
import { contacts, messages } from '../../schema/d1'
import type { Db } from './client'

/** Provider error 21610 (the person texted STOP at the provider): the contact is opted out from now on. */
export function setContactOptedOut(db: Db, tenantId: string, contactId: string, optedOut: boolean, now: number) {
  return db
    .update(contacts)
    .set({ optedOut, updatedAt: now })
    .where(and(eq(contacts.tenantId, tenantId), eq(contacts.id, contactId)))
}

/** When the account last received and last sent a message (epoch ms, null when never). */
export async function lastMessageTimes(db: Db, tenantId: string, accountId: string): Promise<{ inbound: number | null; outbound: number | null }> {
  const rows = await db
    .select({ direction: messages.direction, at: max(messages.createdAt) })
    .from(messages)
    .where(and(eq(messages.tenantId, tenantId), eq(messages.accountId, accountId)))
    .groupBy(messages.direction)
  const at = (d: 'inbound' | 'outbound') => rows.find((r) => r.direction === d)?.at ?? null
  return { inbound: at('inbound'), outbound: at('outbound') }
}
