/** Conversion between the simulated network's messages and the connector's types, by direction. */
import type { ImportedContact, InboundMessage, InboundReaction, OutboundMessage } from '../connector'
import type { ClientMsg, ServerMsg } from './network/protocol'
import { digits, LID_SUFFIX, phoneJid, upstreamIdFor } from './ids'
import { simAttachment } from './media-download'

type NetMessage = Extract<ServerMsg, { t: 'message' }>
type NetContact = Extract<ServerMsg, { t: 'contacts' }>['contacts'][number]

function peer(p: { phone: string | null; lid: string | null; name: string | null }) {
  const lid = p.lid ? (p.lid.endsWith(LID_SUFFIX) ? p.lid : `${p.lid}${LID_SUFFIX}`) : null
  return { id: lid ?? (p.phone ? phoneJid(p.phone) : 'unknown'), phone: p.phone ? digits(p.phone) : null, lid, name: p.name }
}

export function fromNetMessage(m: NetMessage): InboundMessage {
  return {
    upstreamId: m.id,
    from: peer(m.from),
    text: m.text,
    media: m.mediaUrl ? { url: m.mediaUrl, contentType: m.mediaType } : null,
    ...(m.media ? { attachment: simAttachment(m.media) } : {}),
    sentAt: m.ts,
    ...(m.replyTo ? { replyTo: m.replyTo } : {}),
  }
}

export function fromNetReaction(r: Extract<ServerMsg, { t: 'reaction' }>): InboundReaction {
  return { upstreamId: r.target, from: peer(r.from), emoji: r.emoji, at: r.ts }
}

export function fromNetContact(c: NetContact): ImportedContact {
  return { ...peer(c), hasChat: c.hasChat }
}

export function toNetSend(m: OutboundMessage): Extract<ClientMsg, { t: 'send' }> {
  const lid = m.to.peerId?.endsWith(LID_SUFFIX) ? m.to.peerId : null
  return {
    t: 'send',
    id: upstreamIdFor(m.messageId),
    messageId: m.messageId,
    to: { phone: m.to.phone, lid },
    text: m.text,
    mediaUrl: m.mediaUrl,
    quoted: m.replyTo ? { id: m.replyTo.upstreamId, fromMe: m.replyTo.fromMe } : null,
  }
}
