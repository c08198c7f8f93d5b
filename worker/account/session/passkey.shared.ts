/**
 * What the Worker in front of the AccountDO decides about alpha's passkey ceremony from a session record it read
 * (a pure rule, so the connect page's confirm route can use it without the object's code).
 */
import type { SessionRecord } from './state'

/** Whether the owner's "the codes match" can go on to the relay now. */
export function canConfirmPasskey(record: SessionRecord | undefined, now: number): record is SessionRecord {
  const p = record?.passkey
  return !!record && !!p && record.session === 'passkey_code' && p.confirm && (p.codeExpiresAt === null || now < p.codeExpiresAt)
}
