/**
 * The relay links held by the RelayHubDO: hibernatable WebSockets whose per-socket data (which relay token, which
 * tenant scope, which relay process) lives in the socket attachment, so it survives the object's hibernation.
 */
import { z } from 'zod'
import { RELAY_CHANNELS, type EdgeFrame } from '../../schema/frames'

export const LinkAttachment = z.object({
  relayId: z.string(),
  /** A tenant-scoped relay token: only that tenant's sessions may go to this link. */
  tenantId: z.string().nullable(),
  connectedAt: z.number(),
  /** Set by the relay's hello; a link without one has not finished its handshake and gets no work. */
  instance: z.string().nullable(),
  version: z.string().nullable(),
  driver: z.string().nullable(),
  channels: z.array(z.enum(RELAY_CHANNELS)),
  draining: z.boolean(),
})
export type LinkAttachment = z.infer<typeof LinkAttachment>

export type Link = { ws: WebSocket; att: LinkAttachment }

export const relayTag = (relayId: string) => `relay:${relayId}`

/**
 * Attachments parsed since the object last woke. Every frame and every placement looks them up, and a profile of a
 * relay burst put a tenth of the hub's CPU in deserializing and parsing them; writes go through setAttachment, so the
 * copy here never goes stale, and after hibernation it is simply empty.
 */
const parsedAttachments = new WeakMap<WebSocket, LinkAttachment>()

export function attachmentOf(ws: WebSocket): LinkAttachment | null {
  const known = parsedAttachments.get(ws)
  if (known) return known
  const parsed = LinkAttachment.safeParse(ws.deserializeAttachment())
  if (!parsed.success) return null
  parsedAttachments.set(ws, parsed.data)
  return parsed.data
}

export function setAttachment(ws: WebSocket, att: LinkAttachment): void {
  ws.serializeAttachment(att)
  parsedAttachments.set(ws, att)
}

/** Every open link, handshake done or not. */
export function openLinks(ctx: DurableObjectState, tag?: string): Link[] {
  const out: Link[] = []
  for (const ws of ctx.getWebSockets(tag)) {
    if (ws.readyState !== WebSocket.OPEN) continue
    const att = attachmentOf(ws)
    if (att) out.push({ ws, att })
  }
  return out
}

/** Links that finished the handshake: the ones that may hold sessions. */
export function helloedLinks(ctx: DurableObjectState): Array<Link & { att: { instance: string } }> {
  return openLinks(ctx).filter((l): l is Link & { att: { instance: string } } => l.att.instance !== null)
}

/** The live link of a relay process (matched on the token too: an instance id is only a claim). */
export function linkOf(ctx: DurableObjectState, holder: { instance: string | null; relayId: string | null }): Link | undefined {
  if (!holder.instance || !holder.relayId) return undefined
  return helloedLinks(ctx).find((l) => l.att.instance === holder.instance && l.att.relayId === holder.relayId)
}

/**
 * When the edge last heard from a link: the heartbeat (answered by auto-response without waking the object, so only
 * its timestamp tells), any other frame (tracked in memory), or the connect itself.
 */
export function lastSeen(ctx: DurableObjectState, link: Link, framesSeen: Map<string, number>): number {
  const ping = ctx.getWebSocketAutoResponseTimestamp(link.ws)?.getTime() ?? 0
  const frame = link.att.instance ? (framesSeen.get(link.att.instance) ?? 0) : 0
  return Math.max(ping, frame, link.att.connectedAt)
}

/** Sends a frame; a link that is closing simply misses it (the relay gets everything again after its reconnect). */
export function sendFrame(ws: WebSocket, frame: EdgeFrame): boolean {
  try {
    ws.send(JSON.stringify(frame))
    return true
  } catch {
    return false
  }
}

export function closeLink(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, reason)
  } catch {
    // already closed
  }
}
