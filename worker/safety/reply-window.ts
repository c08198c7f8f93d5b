/**
 * The `reply` scope's rule (docs/agent-safety.md): it may send only to a person who wrote to the account within
 * the key's reply window (the recipient's last inbound time comes with its resolution).
 */
import { ApiError } from '../errors'
import type { KeyGrant } from './grant'

export function withinReplyWindow(lastInboundAt: number | null, grant: KeyGrant, now: number): boolean {
  return lastInboundAt !== null && now - lastInboundAt <= grant.replyWindowS * 1000
}

export function checkReplyWindow(grant: KeyGrant, lastInboundAt: number | null, now: number): void {
  if (withinReplyWindow(lastInboundAt, grant, now)) return
  const hours = Math.round((grant.replyWindowS / 3600) * 10) / 10
  throw new ApiError(
    403,
    'key_scope',
    `This reply key may send only to people who wrote to this account in the last ${hours} h; ${lastInboundAt !== null ? 'this person last wrote earlier' : 'this person never wrote'}. A full key may send to anyone`
  )
}
