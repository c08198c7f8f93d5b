/**
 * Sending one gateway message on the open socket: the recipient's JID, the one media item fetched by the relay
 * (Baileys only ever gets a Buffer), the message parts with their stable upstream ids, a deadline, and what was sent
 * kept (recent-sends.ts) so Baileys can re-encrypt a message when a recipient's device asks for it again.
 */
import type { proto, WAMessage, WAMessageKey } from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import type { OutboundMessage } from '../connector'
import { outboundContents, upstreamIdFor } from './convert'
import { isE164, personJid, phoneToJid } from './ids'
import type { FetchMedia } from './media-fetch'
import type { RecentSends } from './recent-sends'
import type { NumberLookup } from './recipients'
import { SendError } from './send-error'
import { sendOptions, type AlphaSocket } from './socket'
import { closeInfo } from './state'

/** Deadline for handing one message part to Baileys, media upload included. */
export const SEND_TIMEOUT_MS = 60_000

export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

export function withTimeout<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms)
  })
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer))
}

/** The recipient's JID: the peer id when it is a person (LID or phone JID), else the E.164 phone; never a group. */
export function recipientJid(to: OutboundMessage['to']): string {
  const jid = personJid(to.peerId) ?? (to.phone && isE164(to.phone) ? phoneToJid(to.phone) : null)
  if (!jid) throw new SendError('invalid_recipient', 'the recipient is neither an alpha person id nor an E.164 phone number')
  return jid
}

/**
 * The JID to send to: a person id as given; a phone-only recipient as alpha knows the number (one cached lookup), or a
 * permanent refusal when the number has no account (Baileys would leave that send pending with no error).
 */
async function resolveRecipient(to: OutboundMessage['to'], sock: AlphaSocket, lookup: NumberLookup): Promise<string> {
  const jid = recipientJid(to)
  if (personJid(to.peerId) !== null || !to.phone) return jid
  const found = await lookup.jidFor(sock, to.phone)
  if (!found) throw new SendError('not_on_alpha', `not_on_alpha: ${to.phone} has no alpha account`)
  return found
}

/** The message a reply quotes, as Baileys' `quoted` option takes it (key and content; it builds the contextInfo). */
export function quotedMessage(jid: string, q: NonNullable<OutboundMessage['replyTo']>): WAMessage {
  return { key: { remoteJid: jid, fromMe: q.fromMe, id: q.upstreamId }, message: { conversation: q.text } }
}

export type Sender = {
  send(m: OutboundMessage): Promise<{ upstreamId: string }>
  /** Baileys' `getMessage`: the content of a recent send, for a recipient device that could not decrypt it. */
  getMessage(key: WAMessageKey): Promise<proto.IMessage | undefined>
}

export type SenderDeps = {
  fetchMedia: FetchMedia
  log: Logger
  openSocket(): AlphaSocket | null
  lookup: NumberLookup
  recent: RecentSends
  /** Null when the recipient may be sent to over this socket; else why not (the number may not start new chats). */
  refusal(jid: string, sock: AlphaSocket): Promise<SendError | null>
  /** Why nothing can be sent while the number is banned or refused (a restricted close), or null. */
  blocked(): SendError | null
}

export function makeSender(deps: SenderDeps): Sender {
  return {
    async send(m) {
      const open = deps.openSocket()
      const blocked = open ? null : deps.blocked()
      if (blocked) throw blocked
      if (!open) throw new SendError('not_connected', 'the alpha session is not connected')
      const jid = await resolveRecipient(m.to, open, deps.lookup)
      const refused = await deps.refusal(jid, open)
      if (refused) throw refused
      const media = m.mediaUrl ? await deps.fetchMedia(m.mediaUrl) : null
      const parts = outboundContents(m.text, media)
      const sock = deps.openSocket()
      if (!sock) throw new SendError('not_connected', 'the alpha session closed while the media was fetched')
      // The first part quotes (alpha shows the quoted text from the message itself, so the edge hands it over).
      const quoted = m.replyTo ? quotedMessage(jid, m.replyTo) : null
      for (const [i, content] of parts.entries()) {
        // The last part carries the gateway message's upstream id; a leading text part gets an id of its own.
        const messageId = upstreamIdFor(m.messageId, parts.length - 1 - i)
        try {
          const sent = await withTimeout(
            sock.sendMessage(jid, content, { ...sendOptions(messageId), ...(quoted && i === 0 ? { quoted } : {}) }),
            SEND_TIMEOUT_MS,
            () => new SendError('upstream_timeout', 'alpha did not take the message in time')
          )
          if (sent?.message) deps.recent.remember(messageId, sent.message)
        } catch (err) {
          if (err instanceof SendError) throw err
          const { statusCode } = closeInfo(err)
          if (statusCode === 428) throw new SendError('not_connected', 'the alpha connection closed during the send')
          deps.log.warn({ err: errText(err), statusCode }, 'alpha: send failed')
          throw new SendError('upstream_error', `alpha did not take the message: ${errText(err)}`)
        }
      }
      return { upstreamId: upstreamIdFor(m.messageId, 0) }
    },
    async getMessage(key) {
      return key.id ? deps.recent.get(key.id) : undefined
    },
  }
}
