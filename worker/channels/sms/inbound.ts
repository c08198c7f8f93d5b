/**
 * An inbound SMS or MMS from either transport into the number's account: the sender becomes (or is) a contact keyed
 * by phone, the message is stored once per provider id, and an opt-out the provider decided (Twilio's OptOutType with
 * Advanced Opt-Out) is applied on top of the STOP/START keyword match every inbound text gets (db/contacts.ts).
 * MMS attachments are fetched into the media store after Twilio has its answer (account/inbound-queue.ts), one
 * message per attachment; `mediaHeaders` gives that fetch Twilio's Basic auth, for Twilio's own host only. The phone's
 * MMS brings its files inline: they are stored before queueing (gateway-mms.ts) and the queue fetches nothing.
 */
import type { ProviderInboundOutcome } from '../../account/inbound-queue'
import type { Attachment } from '../../account/inbound-queue.shared'
import type { AccountRef } from '../../account/storage'
import { twilioApiUrl } from '../../config'
import type { Db } from '../../db/client'
import { contactIdFor } from '../../lib/ids'
import { accountStub } from '../../lib/objects'
import { readSmsConfig } from './config'

export type SmsInbound = {
  tenantId: string
  number: string
  from: string
  text: string
  attachments: Attachment[]
  upstreamId: string
  /** Where the stored media's links point: the service's public origin. */
  origin: string
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

/** Twilio's `NumMedia`, `MediaUrl{N}`, `MediaContentType{N}` as attachments (Twilio sends at most 10). */
export function twilioAttachments(param: (name: string) => string | undefined): Attachment[] {
  const n = Math.min(Number(param('NumMedia') ?? '0') || 0, 10)
  const out: Attachment[] = []
  for (let i = 0; i < n; i++) {
    const url = param(`MediaUrl${i}`)
    if (url) out.push({ url, contentType: param(`MediaContentType${i}`) ?? null, fileName: null, kind: null })
  }
  return out
}

export async function ingestSms(env: Env, m: SmsInbound): Promise<ProviderInboundOutcome> {
  const contactId = await contactIdFor(m.tenantId, m.number, { kind: 'phone', value: m.from })
  const type = m.optOutType?.toUpperCase()
  return accountStub(env, m.tenantId, m.number).providerInbound(
    { tenantId: m.tenantId, accountId: m.number, channel: 'sms' },
    {
      contact: { id: contactId, tenantId: m.tenantId, accountId: m.number, channel: 'sms', phone: m.from },
      text: m.text,
      upstreamId: m.upstreamId,
      attachments: m.attachments,
      origin: m.origin,
      optOut: type === 'STOP' ? 'stop' : type === 'START' ? 'start' : null,
    }
  )
}

/** Twilio's media URLs need the account's Basic auth (unless switched off in its console); nobody else gets it. */
export async function smsMediaHeaders(env: Env, db: Db, ref: AccountRef, url: string): Promise<Record<string, string> | null> {
  if (!URL.canParse(url) || new URL(url).origin !== new URL(twilioApiUrl(env)).origin) return null
  const twilio = (await readSmsConfig(env, db, ref.tenantId, ref.accountId))?.twilio
  return twilio ? { Authorization: `Basic ${btoa(`${twilio.account_sid}:${twilio.auth_token}`)}` } : null
}
