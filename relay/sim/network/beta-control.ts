/**
 * The control API's beta routes (docs/simulator.md): plays the beta app of a number and the people who write to it.
 *   GET  /sim/beta/{phone}                 the account's state
 *   GET  /sim/beta/{phone}/code            the login code the app received (404 when none)
 *   POST /sim/beta/{phone}/password        {password: string | null, hint?}   sets or clears the two-step password
 *   POST /sim/beta/{phone}/unregistered    the number has no beta account
 *   POST /sim/beta/{phone}/qr/accept       the phone scans the QR shown for this number (409 when none)
 *   POST /sim/beta/{phone}/contacts        {contacts: [{phone, name?}]}   replaces the address book
 *   POST /sim/beta/{phone}/inbound         {from, text, name?, username?, phone_hidden?, media?, short?}   someone writes
 *   POST /sim/beta/{phone}/receipt         {message_id, status: "read"}   the recipient read up to that message
 *   POST /sim/beta/{phone}/flood           {seconds}   sends answer FLOOD_WAIT_<seconds> until they have passed
 *   POST /sim/beta/{phone}/stranger        sends answer PEER_FLOOD, except to mutual contacts
 *   POST /sim/beta/{phone}/ban             the number is banned
 *   POST /sim/beta/{phone}/logout          every session is ended from the app (no event)
 *   POST /sim/beta/{phone}/duplicate       the session's key shows up elsewhere: calls answer AUTH_KEY_DUPLICATED
 *   POST /sim/beta/{phone}/drop            the account's connections to the data centre end
 *   POST /sim/beta/{phone}/withhold        {count}   the next updates are recorded but pushed to no session
 *   POST /sim/beta/{phone}/forget          {count}   the oldest updates leave the log (GetDifference: too long)
 *   POST /sim/beta/{phone}/rpc-error       {method, error, code?}   the next call of that method answers the error
 *   GET  /sim/beta/{phone}/outbox          what people received
 *   POST /sim/beta/{phone}/react           {from, message_id, emoji}   `from` reacts to a message of the chat ('' removes)
 *   GET  /sim/beta/{phone}/actions         the reactions, typing notices and read marks the account's sessions made
 *   (`inbound` takes `reply_to`: the id, in the account's numbering, of the message the person quotes)
 */
import { z } from 'zod'
import { E164, SimMediaBody, simFileOf } from './bodies'
import type { BetaAccount } from './beta-account'
import { betaContactReacts } from './beta-chat-actions'
import type { BetaDataCentre } from './beta-dc/server'
import type { SimBetaNetwork } from './beta-network'
import { SimError } from './network'

export const BetaPasswordBody = z.object({ password: z.string().min(1).max(256).nullable(), hint: z.string().max(128).nullable().default(null) })
export const BetaContactsBody = z.object({ contacts: z.array(z.object({ phone: E164, name: z.string().max(200).nullable().default(null) })).max(20_000) })
export const BetaInboundBody = z.object({
  from: E164,
  text: z.string().max(4096),
  name: z.string().max(200).optional(),
  username: z
    .string()
    .regex(/^[A-Za-z]\w{3,31}$/)
    .optional(),
  phone_hidden: z.boolean().default(false),
  media: SimMediaBody.optional(),
  /** UpdateShortMessage (no user attached), as beta sends messages from people the session should know. */
  short: z.boolean().default(false),
  reply_to: z.coerce.number().int().positive().optional(),
})
const BetaReactBody = z.object({ from: E164, message_id: z.coerce.number().int().positive(), emoji: z.string().max(32) })
export const BetaReceiptBody = z.object({ message_id: z.string().min(1), status: z.literal('read') })
export const BetaFloodBody = z.object({ seconds: z.number().int().min(1).max(86_400) })
export const BetaCountBody = z.object({ count: z.number().int().min(1).max(100_000) })
export const BetaRpcErrorBody = z.object({
  /** The TL method's class name as GramJS names it, e.g. `messages.SendMessage`, `updates.GetDifference`. */
  method: z.string().regex(/^[A-Za-z.]+$/),
  error: z.string().regex(/^[A-Z0-9_]+$/),
  code: z.number().int().min(300).max(599).default(400),
})

export function betaView(net: SimBetaNetwork, a: BetaAccount) {
  return {
    phone: a.phone,
    registered: a.registered,
    banned: a.banned,
    has_password: a.password !== null,
    logged_in_sessions: net.liveSessions(a).length,
    contacts: a.contacts.length,
    pending_login: net.pendingLogin(a),
    flood_seconds: Math.max(0, Math.ceil((a.floodUntil - net.now()) / 1000)),
    stranger: a.stranger,
    user_id: a.userId,
    name: [a.firstName, a.lastName].filter(Boolean).join(' '),
    username: a.username,
    outbox_count: a.outbox.length,
    pts: a.box.pts,
    withheld: a.withhold,
  }
}

/** One beta route; `parse` and `body` are the control API's own (zod at the edge, JSON body). */
export async function betaRoute(
  net: SimBetaNetwork,
  dc: BetaDataCentre,
  route: string,
  phone: string,
  body: () => Promise<unknown>,
  parse: <S extends z.ZodType>(shape: S, value: unknown) => z.infer<S>
): Promise<unknown> {
  const a = net.account(phone)
  switch (route) {
    case 'GET ':
      return betaView(net, a)
    case 'GET code': {
      const c = net.codesReceived.get(a.phone)
      if (!c) throw new SimError(404, `the beta app of ${a.phone} has received no login code (start a code login through the gateway first)`)
      return { code: c.code, expires_at: c.expiresAt }
    }
    case 'POST password': {
      const b = parse(BetaPasswordBody, await body())
      a.password = b.password
      a.hint = b.password ? b.hint : null
      return betaView(net, a)
    }
    case 'POST unregistered':
      a.registered = false
      return betaView(net, a)
    case 'POST qr/accept':
      if (!net.acceptQr(a)) throw new SimError(409, `no QR login is showing for ${a.phone}: connect it with mode "qr" through the gateway first`)
      return { accepted: true }
    case 'POST contacts': {
      const b = parse(BetaContactsBody, await body())
      net.setContacts(a, b.contacts)
      return betaView(net, a)
    }
    case 'POST inbound': {
      const b = parse(BetaInboundBody, await body())
      const from = net.account(b.from)
      if (b.name) from.setName(b.name)
      if (b.username) from.username = b.username
      from.phoneHidden = b.phone_hidden
      const file = b.media ? simFileOf(b.media) : null
      return { message_id: String(net.inbound(from, a, b.text, file, b.short, b.reply_to ?? null)) }
    }
    case 'POST react': {
      const b = parse(BetaReactBody, await body())
      if (!betaContactReacts(net, net.account(b.from), a, b.message_id, b.emoji))
        throw new SimError(404, `no message ${b.message_id} in the chat of ${a.phone} with ${b.from}`)
      return { reacted: true }
    }
    case 'GET actions':
      return { actions: a.actions }
    case 'POST receipt': {
      const b = parse(BetaReceiptBody, await body())
      const sent = a.outbox.find((e) => e.messageId === b.message_id || String(e.id) === b.message_id)
      if (!sent) throw new SimError(404, `no sent message ${b.message_id} in the outbox of ${a.phone}`)
      const reader = net.byUserId(sent.toUserId)!
      net.readOutbox(reader, a, sent.id)
      return { message_id: String(sent.id), status: 'read' }
    }
    case 'POST flood': {
      const b = parse(BetaFloodBody, await body())
      a.floodUntil = net.now() + b.seconds * 1000
      return betaView(net, a)
    }
    case 'POST stranger':
      a.stranger = true
      return betaView(net, a)
    case 'POST ban':
      a.banned = true
      return betaView(net, a)
    case 'POST logout':
      net.revoke(a)
      return betaView(net, a)
    case 'POST duplicate':
      net.duplicate(a)
      return betaView(net, a)
    case 'POST drop':
      return { dropped: dc.drop(a) }
    case 'POST withhold':
      a.withhold += parse(BetaCountBody, await body()).count
      return betaView(net, a)
    case 'POST forget':
      a.box.forget(parse(BetaCountBody, await body()).count)
      return betaView(net, a)
    case 'POST rpc-error': {
      const b = parse(BetaRpcErrorBody, await body())
      a.scriptedErrors.push({ method: b.method, message: b.error, code: b.code })
      return betaView(net, a)
    }
    case 'GET outbox':
      return {
        messages: a.outbox.map((e) => ({
          id: String(e.id),
          message_id: e.messageId,
          to: e.to,
          text: e.text,
          media_url: e.file ? net.mediaUrl(e.file.key) : null,
          reply_to: e.replyTo === null ? null : String(e.replyTo),
          media_content_type: e.file?.contentType ?? null,
          sent_at: e.sentAt,
        })),
      }
    default:
      throw new SimError(404, `unknown sim route ${route} for beta; see docs/simulator.md`)
  }
}
