/**
 * The provider callbacks (public routes, no API key; each authenticated by the provider's signature over a
 * per-connection URL): Twilio's inbound SMS and per-message status callbacks, and the phone's webhooks. A bad or
 * missing signature answers 403 and stores nothing.
 */
import { Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { z } from 'zod'
import { publicOrigin } from '../../config'
import { tenantDb } from '../../db/placement'
import type { AppEnv } from '../../env'
import { ApiError } from '../../errors'
import { numberFromSegment, readSmsConfig, writeSmsConfig } from './config'
import { GATEWAY_WEBHOOK_MAX_BYTES, MmsDownloaded, mmsText, storeMmsFiles } from './gateway-mms'
import { verifyGatewaySignature } from './gateway-signature'
import { ingestSms, normalizeSender, twilioAttachments } from './inbound'
import { applySmsReport, reportCarrierFiltering, twilioReport } from './status'
import { formParams, verifyTwilioSignature } from './twilio-signature'
import { statusTokenValid } from './urls'

export const smsCallbacks = new Hono<AppEnv>()

const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>'
const forged = () => new ApiError(403, 'invalid_signature', 'The request signature is missing or does not match')

async function connection(env: Env, tenantId: string, segment: string) {
  const number = numberFromSegment(segment)
  if (!number) throw new ApiError(404, 'not_found', 'No such SMS connection')
  // The tenant in the URL names its shard (db/placement.ts): an unknown one is the same 404 as an unknown number.
  const db = await tenantDb(env, tenantId)
  const config = db && (await readSmsConfig(env, db, tenantId, number))
  if (!db || !config) throw new ApiError(404, 'not_found', 'No such SMS connection')
  return { db, number, config }
}

/** Decoded from bytes: workerd warns when .text() reads a form-encoded body. */
async function rawText(c: { req: { arrayBuffer(): Promise<ArrayBuffer> } }): Promise<string> {
  return new TextDecoder().decode(await c.req.arrayBuffer())
}

async function twilioForm(c: { req: { arrayBuffer(): Promise<ArrayBuffer> } }) {
  return formParams(new URLSearchParams(await rawText(c)))
}

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v)

smsCallbacks.post('/twilio/:tenantId/:number/inbound', async (c) => {
  const { number, config } = await connection(c.env, c.req.param('tenantId'), c.req.param('number'))
  const t = config.twilio
  if (!t) throw new ApiError(404, 'not_found', 'No Twilio transport on this number')
  const params = await twilioForm(c)
  // Twilio signs the URL it was given: the one stored at connect, not whatever host the request arrived on.
  if (!(await verifyTwilioSignature(t.auth_token, c.req.header('X-Twilio-Signature'), t.inbound_url, params))) throw forged()
  if (one(params.AccountSid) !== t.account_sid) throw forged()
  const sid = one(params.MessageSid)
  const from = one(params.From)
  if (!sid || !from) throw new ApiError(400, 'invalid_request', 'MessageSid and From are required')
  // MMS attachments are fetched into the media store after this answer (Twilio waits 15 s at most): one message per
  // attachment, the text on the first (docs/channels/sms.md, "Pictures and other media").
  await ingestSms(c.env, {
    tenantId: c.req.param('tenantId'),
    number,
    from,
    text: one(params.Body) ?? '',
    attachments: twilioAttachments((name) => one(params[name])),
    upstreamId: sid,
    origin: publicOrigin(c.env, c.req.url),
    optOutType: one(params.OptOutType) ?? null,
  })
  return c.body(EMPTY_TWIML, 200, { 'Content-Type': 'text/xml' })
})

smsCallbacks.post('/twilio/:tenantId/:number/status/:messageId', async (c) => {
  const tenantId = c.req.param('tenantId')
  const messageId = c.req.param('messageId')
  const { db, number, config } = await connection(c.env, tenantId, c.req.param('number'))
  const t = config.twilio
  if (!t) throw new ApiError(404, 'not_found', 'No Twilio transport on this number')
  if (!(await statusTokenValid(c.env, tenantId, number, messageId, c.req.query('token')))) throw forged()
  const params = await twilioForm(c)
  const url = new URL(c.req.url)
  const signed = `${new URL(t.inbound_url).origin}${url.pathname}${url.search}`
  if (!(await verifyTwilioSignature(t.auth_token, c.req.header('X-Twilio-Signature'), signed, params))) throw forged()
  const code = Number(one(params.ErrorCode))
  const report = twilioReport(one(params.MessageStatus) ?? one(params.SmsStatus) ?? '', Number.isInteger(code) && code > 0 ? code : null)
  if (report && (await applySmsReport(c.env, db, tenantId, number, messageId, report, Date.now())) === 'applied')
    await reportCarrierFiltering(c.env, tenantId, number, report)
  return c.body(null, 204)
})

const Envelope = z.object({
  id: z.string().min(1).max(256),
  event: z.string(),
  deviceId: z.string().nullish(),
  webhookId: z.string().nullish(),
  payload: z.record(z.string(), z.unknown()),
})
const Received = z.object({
  messageId: z.string().nullish(),
  message: z.string().default(''),
  sender: z.string().nullish(),
  phoneNumber: z.string().nullish(),
})
const Report = z.object({ messageId: z.string().min(1), reason: z.string().nullish() })

/** How often a webhook refreshes the stored last-seen time (each refresh rewrites the sealed config). */
const LAST_SEEN_WRITE_MS = 60_000

/**
 * The phone's route reads up to 8 MiB (an MMS carries its files base64-encoded); nothing else here is public and
 * large, and /v1 keeps its 256 KiB.
 */
const gatewayBodyLimit = bodyLimit({
  maxSize: GATEWAY_WEBHOOK_MAX_BYTES,
  onError: () => {
    throw new ApiError(413, 'body_too_large', `The request body exceeds ${GATEWAY_WEBHOOK_MAX_BYTES} bytes`)
  },
})

smsCallbacks.post('/android-gateway/:tenantId/:number/events', gatewayBodyLimit, async (c) => {
  const tenantId = c.req.param('tenantId')
  const { db, number, config } = await connection(c.env, tenantId, c.req.param('number'))
  const a = config.android
  if (!a) throw new ApiError(404, 'not_found', 'No phone transport on this number')
  const raw = await rawText(c)
  const now = Date.now()
  const verdict = await verifyGatewaySignature(a.signing_key, raw, c.req.header('X-Signature'), c.req.header('X-Timestamp'), now)
  if (!verdict.ok) throw forged()
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw new ApiError(400, 'invalid_request', 'the webhook body is not JSON')
  }
  const envelope = Envelope.safeParse(parsed)
  if (!envelope.success) throw new ApiError(400, 'invalid_request', 'not an SMS gateway webhook envelope')
  const { event, payload } = envelope.data
  if (a.last_seen === null || now - a.last_seen >= LAST_SEEN_WRITE_MS) {
    await writeSmsConfig(c.env, db, tenantId, number, { ...config, android: { ...a, last_seen: now } }, now)
  }
  if (event === 'sms:received') {
    const p = Received.safeParse(payload)
    const sender = p.success ? (p.data.sender ?? p.data.phoneNumber ?? null) : null
    const from = sender ? normalizeSender(sender, number) : null
    if (!p.success || !from) throw new ApiError(400, 'invalid_request', 'sms:received without a usable sender')
    // The phone retries a webhook with the same envelope id: that id de-duplicates.
    await ingestSms(c.env, {
      tenantId,
      number,
      from,
      text: p.data.message,
      attachments: [],
      upstreamId: `gw:${envelope.data.id}`,
      origin: publicOrigin(c.env, c.req.url),
      optOutType: null,
    })
  } else if (event === 'mms:downloaded') {
    const p = MmsDownloaded.safeParse(payload)
    const sender = p.success ? (p.data.sender ?? p.data.phoneNumber ?? null) : null
    const from = sender ? normalizeSender(sender, number) : null
    if (!p.success || !from) throw new ApiError(400, 'invalid_request', 'mms:downloaded without a usable sender')
    // The MMS's own id when the phone gives one (the phone may report one MMS twice), else the envelope's.
    const upstreamId = `gw-mms:${p.data.messageId || envelope.data.id}`
    // Signed, so the files are the phone's: stored before queueing; a retried delivery finds them and writes nothing.
    const attachments = await storeMmsFiles(c.env, db, { tenantId, accountId: number }, upstreamId, p.data, now)
    await ingestSms(c.env, { tenantId, number, from, text: mmsText(p.data), attachments, upstreamId, origin: publicOrigin(c.env, c.req.url), optOutType: null })
  } else if (event === 'sms:sent' || event === 'sms:delivered' || event === 'sms:failed') {
    const p = Report.safeParse(payload)
    if (!p.success) throw new ApiError(400, 'invalid_request', `${event} without a messageId`)
    const report =
      event === 'sms:failed'
        ? { status: 'failed' as const, code: null, error: `the phone could not send the SMS${p.data.reason ? `: ${p.data.reason}` : ''}` }
        : { status: event === 'sms:sent' ? ('sent' as const) : ('delivered' as const) }
    await applySmsReport(c.env, db, tenantId, number, p.data.messageId, report, now)
  }
  // Other events (a webhook registered by hand in the app) are acknowledged and ignored.
  return c.body(null, 204)
})
