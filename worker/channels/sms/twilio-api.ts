/**
 * A thin client for the Twilio REST calls the SMS channel makes (upstreams.md 3): the account check, the number
 * lookup and its incoming-SMS URL, Messages.json, and the reads behind the +1 rule: Messaging Services and their
 * A2P campaigns, and a toll-free number's verification. Basic auth `AccountSid:AuthToken`, form-encoded bodies, JSON
 * answers parsed with zod. Base URLs come from configuration.
 */
import { z } from 'zod'
import { twilioApiUrl, twilioMessagingApiUrl } from '../../config'
import { isTollFree } from './config'

export type TwilioCreds = { accountSid: string; authToken: string }

/** A refusal or failure from Twilio: HTTP status, Twilio's numeric error code when it gave one. */
export class TwilioError extends Error {
  constructor(
    readonly status: number,
    readonly code: number | null,
    message: string
  ) {
    super(message)
    this.name = 'TwilioError'
  }
}

const TIMEOUT_MS = 10_000
const ErrorBody = z.object({ code: z.number().int().nullable().optional(), message: z.string().optional() }).loose()

async function call<S extends z.ZodType>(base: string, creds: TwilioCreds, path: string, shape: S, form?: URLSearchParams): Promise<z.infer<S>> {
  let res: Response
  try {
    res = await fetch(`${base}${path}`, {
      method: form ? 'POST' : 'GET',
      headers: {
        Authorization: `Basic ${btoa(`${creds.accountSid}:${creds.authToken}`)}`,
        Accept: 'application/json',
        ...(form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form?.toString(),
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    })
  } catch (err) {
    throw new TwilioError(0, null, `Twilio could not be reached: ${err instanceof Error ? err.message : String(err)}`)
  }
  const text = await res.text()
  let json: unknown = null
  try {
    json = text ? JSON.parse(text) : null
  } catch {
    // Not JSON: only the status says anything.
  }
  if (!res.ok) {
    const err = ErrorBody.safeParse(json)
    const code = err.success ? (err.data.code ?? null) : null
    throw new TwilioError(res.status, code, err.success && err.data.message ? err.data.message : `Twilio answered HTTP ${res.status}`)
  }
  const parsed = shape.safeParse(json)
  if (!parsed.success) throw new TwilioError(502, null, `Twilio answered an unexpected body for ${path.split('?')[0]}`)
  return parsed.data
}

const Account = z.object({ sid: z.string(), status: z.string(), type: z.string().optional() }).loose()

export function fetchAccount(env: Env, creds: TwilioCreds) {
  return call(twilioApiUrl(env), creds, `/2010-04-01/Accounts/${creds.accountSid}.json`, Account)
}

export const IncomingNumber = z
  .object({
    sid: z.string(),
    phone_number: z.string(),
    sms_url: z.string().nullable().optional(),
    capabilities: z.object({ sms: z.boolean().optional(), mms: z.boolean().optional() }).loose().nullable().optional(),
  })
  .loose()
export type IncomingNumber = z.infer<typeof IncomingNumber>

const NumberList = z.object({ incoming_phone_numbers: z.array(IncomingNumber) }).loose()

/** The account's number equal to `e164` (the filter also matches partial numbers, so the match is checked here). */
export async function findIncomingNumber(env: Env, creds: TwilioCreds, e164: string): Promise<IncomingNumber | null> {
  const list = await call(
    twilioApiUrl(env),
    creds,
    `/2010-04-01/Accounts/${creds.accountSid}/IncomingPhoneNumbers.json?PhoneNumber=${encodeURIComponent(e164)}`,
    NumberList
  )
  return list.incoming_phone_numbers.find((n) => n.phone_number === e164) ?? null
}

/** Points the number's incoming SMS at `url` (POST), or clears it with an empty string. */
export function setSmsUrl(env: Env, creds: TwilioCreds, numberSid: string, url: string) {
  const form = new URLSearchParams({ SmsUrl: url, SmsMethod: 'POST' })
  return call(twilioApiUrl(env), creds, `/2010-04-01/Accounts/${creds.accountSid}/IncomingPhoneNumbers/${numberSid}.json`, IncomingNumber, form)
}

const SentMessage = z.object({ sid: z.string(), status: z.string() }).loose()

export function createMessage(env: Env, creds: TwilioCreds, m: { from: string; to: string; body: string; mediaUrl: string | null; statusCallback: string }) {
  const form = new URLSearchParams({ To: m.to, From: m.from, Body: m.body, StatusCallback: m.statusCallback })
  if (m.mediaUrl) form.append('MediaUrl', m.mediaUrl)
  return call(twilioApiUrl(env), creds, `/2010-04-01/Accounts/${creds.accountSid}/Messages.json`, SentMessage, form)
}

/** Messaging API pages name their list by `meta.key` (services, phone_numbers, compliance). */
const Page = z.object({ meta: z.object({ key: z.string(), next_page_url: z.string().nullable().optional() }).loose() }).loose()
const MAX_PAGES = 5

async function listAll<S extends z.ZodType>(env: Env, creds: TwilioCreds, path: string, item: S): Promise<z.infer<S>[]> {
  const base = twilioMessagingApiUrl(env)
  const out: z.infer<S>[] = []
  let next: string | null = `${path}${path.includes('?') ? '&' : '?'}PageSize=50`
  for (let i = 0; next && i < MAX_PAGES; i++) {
    const page: z.infer<typeof Page> = await call(base, creds, next, Page)
    const items = z.array(item).parse((page as Record<string, unknown>)[page.meta.key] ?? [])
    out.push(...items)
    const url = page.meta.next_page_url
    next = url ? new URL(url).pathname + new URL(url).search : null
  }
  return out
}

const Service = z.object({ sid: z.string() }).loose()
const ServiceNumber = z.object({ phone_number: z.string() }).loose()
const Campaign = z.object({ sid: z.string().optional(), campaign_status: z.string().nullable().optional() }).loose()
const TollfreeVerification = z.object({ tollfree_phone_number_sid: z.string(), status: z.string().nullable().optional() }).loose()

export type A2pFinding = { confirmed: boolean; messagingServiceSid: string | null; campaignStatus: string | null }

/**
 * What confirms A2P for a number (docs/channels/sms.md): a Messaging Service of the account lists the number among
 * its phone numbers, and that service's US A2P (Usa2p) compliance list holds a campaign with status VERIFIED.
 * Found in a service whose campaign is not verified (yet): unconfirmed, with that status. A toll-free number is
 * confirmed by its toll-free verification instead (below).
 */
export async function findA2p(env: Env, creds: TwilioCreds, e164: string, numberSid: string): Promise<A2pFinding> {
  if (isTollFree(e164)) return findTollfreeVerification(env, creds, numberSid)
  let pending: A2pFinding = { confirmed: false, messagingServiceSid: null, campaignStatus: null }
  for (const service of await listAll(env, creds, '/v1/Services', Service)) {
    const numbers = await listAll(env, creds, `/v1/Services/${service.sid}/PhoneNumbers`, ServiceNumber)
    if (!numbers.some((n) => n.phone_number === e164)) continue
    const campaigns = await listAll(env, creds, `/v1/Services/${service.sid}/Compliance/Usa2p`, Campaign)
    const verified = campaigns.find((c) => (c.campaign_status ?? '').toUpperCase() === 'VERIFIED')
    if (verified) return { confirmed: true, messagingServiceSid: service.sid, campaignStatus: 'VERIFIED' }
    pending = { confirmed: false, messagingServiceSid: service.sid, campaignStatus: campaigns[0]?.campaign_status ?? null }
  }
  return pending
}

/**
 * What confirms a toll-free number (docs/channels/sms.md): a toll-free verification of the number (by its PN sid)
 * with status TWILIO_APPROVED. Toll-free numbers take no 10DLC campaign, so a Messaging Service proves nothing for
 * them. Otherwise unconfirmed, with the status of the verification Twilio lists first (PENDING_REVIEW, IN_REVIEW,
 * TWILIO_REJECTED), or none.
 */
async function findTollfreeVerification(env: Env, creds: TwilioCreds, numberSid: string): Promise<A2pFinding> {
  const listed = await listAll(env, creds, `/v1/Tollfree/Verifications?TollfreePhoneNumberSid=${encodeURIComponent(numberSid)}`, TollfreeVerification)
  // Twilio filters by the number; checked here too, so another number's approval can never confirm this one.
  const verifications = listed.filter((v) => v.tollfree_phone_number_sid === numberSid)
  const approved = verifications.some((v) => (v.status ?? '').toUpperCase() === 'TWILIO_APPROVED')
  return { confirmed: approved, messagingServiceSid: null, campaignStatus: approved ? 'TWILIO_APPROVED' : (verifications[0]?.status ?? null) }
}
