/**
 * An inbound SMS from either transport into the number's account: the sender becomes (or is) a contact keyed by
 * phone, the message is stored once per provider id, and an opt-out the provider decided (Twilio's OptOutType with
 * Advanced Opt-Out) is applied on top of the STOP/START keyword match every inbound text gets (db/contacts.ts).
 */
import { accountStub } from '../../lib/objects'
import type { Db } from '../../db/client'
import { setContactOptedOut } from '../../db/sms'
import { contactIdFor } from '../../lib/ids'

export type SmsInbound = {
  tenantId: string
  number: string
  from: string
  text: string
  mediaUrl: string | null
  mediaContentType: string | null
  upstreamId: string
  /** Twilio OptOutType: STOP opts out, START opts back in, HELP changes nothing. */
  optOutType: string | null
}

/**
 * The gateway may report a sender in local format (`6505551212`, upstreams.md 4.4). Best effort: E.164 stays,
 * `00…` becomes `+…`, ten digits on a +1 number become +1…, anything else gets a `+`.
 */
export function normalizeSender(sender: string, number: string): string | null {
  const trimmed = sender.replace(/[\s().-]/g, '')
  if (/^\+[1-9]\d{6,14}$/.test(trimmed)) return trimmed
  if (!/^\d{3,16}$/.test(trimmed)) return null
  if (trimmed.startsWith('00')) return `+${trimmed.slice(2)}`
  if (number.startsWith('+1') && trimmed.length === 10) return `+1${trimmed}`
  if (number.startsWith('+1') && trimmed.length === 11 && trimmed.startsWith('1')) return `+${trimmed}`
  return `+${trimmed}`
}

export async function ingestSms(env: Env, db: Db, m: SmsInbound) {
  const contactId = await contactIdFor(m.tenantId, m.number, { kind: 'phone', value: m.from })
  const outcome = await accountStub(env, m.tenantId, m.number).ingest({
    ref: { tenantId: m.tenantId, accountId: m.number, channel: 'sms' },
    contact: { id: contactId, tenantId: m.tenantId, accountId: m.number, channel: 'sms', phone: m.from },
    text: m.text,
    mediaUrl: m.mediaUrl,
    mediaContentType: m.mediaContentType,
    upstreamId: m.upstreamId,
  })
  const type = m.optOutType?.toUpperCase()
  if (outcome.stored && !outcome.duplicate && (type === 'STOP' || type === 'START')) {
    await setContactOptedOut(db, m.tenantId, outcome.contactId, type === 'STOP', Date.now())
  }
  return outcome
}
