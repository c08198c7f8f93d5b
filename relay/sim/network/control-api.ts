/**
 * The simulator's control API (docs/simulator.md): plays the user's phone and their contacts.
 *   POST /sim/alpha/{phone}/link      {passkey?, contacts?}   completes the pending QR or pairing-code link
 *   POST /sim/alpha/{phone}/inbound   {from, text, name?, media_url?, media?, lid?}   a contact writes; `media`
 *        {content_type, file_name?, data_base64, voice_note?} is an attachment the relay downloads and stores
 *   GET  /sim/media/{id}               the network's media server (what the relay downloads attachments from)
 *   POST /sim/alpha/{phone}/receipt   {message_id, status}    the recipient's phone reports delivered / read
 *   POST /sim/alpha/{phone}/react     {from, message_id, emoji}   a contact reacts to a message of the chat ('' removes)
 *   POST /sim/alpha/{phone}/timelock  {active, until_ms?}     the network sets or lifts the reach-out time lock
 *   GET  /sim/alpha/{phone}/actions   what the device did besides sending (reactions, typing, read marks, lookups)
 *   (`inbound` takes `reply_to`: the network id of the message the contact quotes)
 *   POST /sim/alpha/{phone}/logout    the session is logged out from the phone
 *   POST /sim/alpha/{phone}/ban       the number is restricted
 *   GET  /sim/alpha/{phone}/outbox    what the contacts received
 *   GET  /sim/alpha/{phone}           the phone's state;  GET /sim  every phone
 * and beta's under /sim/beta/{phone}/… (beta-control.ts) and /sim/beta/dc/… (its fake data centre: beta-dc/control.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { z } from 'zod'
import { E164, SimMediaBody, simFileOf } from './bodies'
import { betaRoute, betaView } from './beta-control'
import { dcRoute } from './beta-dc/control'
import type { BetaDataCentre } from './beta-dc/server'
import { contactReacts, setTimelock } from './chat-actions'
import { SimError, type SimNetwork } from './network'

const LinkBody = z.object({
  passkey: z.boolean().default(false),
  contacts: z
    .array(
      z.object({
        phone: E164,
        name: z.string().max(200).nullable().default(null),
        lid: z.string().max(100).nullable().default(null),
        has_chat: z.boolean().default(false),
      })
    )
    .max(20_000)
    .default([]),
})
const InboundBody = z.object({
  from: E164,
  text: z.string().max(65_536),
  name: z.string().max(200).optional(),
  media_url: z.url().optional(),
  media: SimMediaBody.optional(),
  lid: z.string().max(100).optional(),
  reply_to: z.string().min(1).max(128).optional(),
})
const ReactBody = z.object({ from: E164, message_id: z.string().min(1).max(128), emoji: z.string().max(32) })
const TimelockBody = z.object({ active: z.boolean(), until_ms: z.number().int().positive().optional() })
const ReceiptBody = z.object({ message_id: z.string().min(1), status: z.enum(['delivered', 'read']) })

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  if (!text) return {}
  try {
    return JSON.parse(text)
  } catch {
    throw new SimError(400, 'the body is not valid JSON')
  }
}

function parse<S extends z.ZodType>(shape: S, value: unknown): z.infer<S> {
  const r = shape.safeParse(value)
  if (!r.success) throw new SimError(400, r.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '))
  return r.data
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

export async function handleControl(net: SimNetwork, dc: BetaDataCentre, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://sim')
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent)
  try {
    if (parts.length === 1 && req.method === 'GET')
      return reply(res, 200, {
        timing: net.timing,
        phones: net.all().map((p) => p.view()),
        beta: [...net.beta.accounts.values()].map((a) => betaView(net.beta, a)),
      })
    const [, channel, rawPhone, ...rest] = parts
    if ((channel !== 'alpha' && channel !== 'beta') || !rawPhone) throw new SimError(404, 'unknown sim route; see GET /sim')
    const route = `${req.method} ${rest.join('/')}`
    if (channel === 'beta' && rawPhone === 'dc') return reply(res, 200, await dcRoute(dc, route, () => readJson(req), parse))
    const phone = parse(E164, /^\d+$/.test(rawPhone) ? `+${rawPhone}` : rawPhone)
    if (channel === 'beta') return reply(res, 200, await betaRoute(net.beta, dc, route, phone, () => readJson(req), parse))
    switch (route) {
      case 'GET ':
        return reply(res, 200, net.known(phone).view())
      case 'POST link': {
        const b = parse(LinkBody, await readJson(req))
        return reply(
          res,
          200,
          net.link(phone, { passkey: b.passkey, contacts: b.contacts.map((c) => ({ phone: c.phone, name: c.name, lid: c.lid, hasChat: c.has_chat })) })
        )
      }
      case 'POST inbound': {
        const b = parse(InboundBody, await readJson(req))
        const attachment = b.media ? simFileOf(b.media) : undefined
        return reply(
          res,
          200,
          net.inbound(phone, {
            from: b.from,
            text: b.text,
            name: b.name ?? null,
            mediaUrl: b.media_url ?? null,
            lid: b.lid ?? null,
            attachment,
            ...(b.reply_to ? { replyTo: b.reply_to } : {}),
          })
        )
      }
      case 'POST receipt': {
        const b = parse(ReceiptBody, await readJson(req))
        return reply(res, 200, net.receipt(phone, b.message_id, b.status))
      }
      case 'POST react': {
        const b = parse(ReactBody, await readJson(req))
        const p = net.known(phone)
        const done = contactReacts(p, { from: b.from, messageId: b.message_id, emoji: b.emoji })
        if (!done) throw new SimError(404, `no message ${b.message_id} in the chat of ${phone} with ${b.from}`)
        return reply(res, 200, done)
      }
      case 'POST timelock': {
        const b = parse(TimelockBody, await readJson(req))
        setTimelock(net.known(phone), { active: b.active, until: b.until_ms ?? null })
        return reply(res, 200, { active: b.active, until_ms: net.known(phone).timelock?.until ?? null })
      }
      case 'GET actions':
        return reply(res, 200, { actions: net.known(phone).actions })
      case 'POST logout':
        net.logout(net.known(phone))
        return reply(res, 200, { logged_out: true })
      case 'POST ban':
        net.ban(phone)
        return reply(res, 200, { banned: true })
      case 'GET outbox':
        return reply(res, 200, { messages: net.known(phone).outbox })
      default:
        throw new SimError(404, `unknown sim route ${req.method} ${url.pathname}; see docs/simulator.md`)
    }
  } catch (err) {
    if (err instanceof SimError) return reply(res, err.status, { error: err.message })
    return reply(res, 500, { error: err instanceof Error ? err.message : String(err) })
  }
}
