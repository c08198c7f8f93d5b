/**
 * The `reply` scope's rule (docs/agent-safety.md): it may send only to a person who wrote to the account within
 * the key's reply window. One contact read, only for reply keys.
 */
import type { Db } from '../db/client'
import { getContact } from '../db/contacts'
import { ApiError } from '../errors'
import type { KeyGrant } from './grant'

export function withinReplyWindow(lastInboundAt: number | null, grant: KeyGrant, now: number): boolean {
  return lastInboundAt !== null && now - lastInboundAt <= grant.replyWindowS * 1000
}

export async function checkReplyWindow(db: Db, grant: KeyGrant, contact: { id: string; tenantId: string; hasInbound: boolean }, now: number): Promise<void> {
  const row = contact.hasInbound ? await getContact(db, contact.tenantId, contact.id) : undefined
  if (withinReplyWindow(row?.lastInboundAt ?? null, grant, now)) return
  const hours = Math.round((grant.replyWindowS / 3600) * 10) / 10
  throw new ApiError(
    403,
    'key_scope',
    `This reply key may send only to people who wrote to this account in the last ${hours} h; ${row ? 'this person last wrote earlier' : 'this person never wrote'}. A full key may send to anyone`
  )
}
