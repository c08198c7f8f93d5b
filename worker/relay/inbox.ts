/**
 * Frames from a relay, parsed with the shared protocol and routed to the account's Durable Object. Session frames
 * are checked against the lease (same relay process, same fencing number) and handled in order per session; each
 * is acked only after the AccountDO has committed what it carries, so the relay resends whatever is not acked.
 * This module reads a message and routes its frames: the handshake to hello.ts, the answers to the hub's questions
 * here, session frames to session-inbox.ts (inbound and receipts group-committed by frame-batches.ts; who may send
 * a session frame, session-frame.ts).
 */
import { CLOSE, PONG_TEXT, RELAY_BATCH_FRAMES_MAX, RelayFrame } from '../../schema/frames'
import type { HubContext, Pending } from './hub-context'
import { attachmentOf, closeLink, sendFrame, setAttachment, type Link } from './links'
import { onHello } from './hello'
import { onSessionFrame } from './session-inbox'

/** One frame of a message, already read as JSON, checked against the protocol. */
function parse(json: unknown): { frame: RelayFrame } | { error: string; id: string | null } {
  const parsed = RelayFrame.safeParse(json)
  if (parsed.success) return { frame: parsed.data }
  const id = typeof json === 'object' && json !== null && 'id' in json && typeof json.id === 'string' ? json.id : null
  return {
    error: parsed.error.issues
      .slice(0, 2)
      .map((i) => `${i.path.join('.')}: ${i.message}`)
      .join('; '),
    id,
  }
}

/**
 * A message from a relay: one frame, or (the welcome says `batches`) a JSON array of frames, each handled as if it
 * had come alone, in the same order. Each frame's handling starts before the next is read, so the inbound frames of
 * one session in a batch land in its buffer together and share one AccountDO call and D1 commit.
 */
export async function onRelayMessage(c: HubContext, link: Link, raw: string | ArrayBuffer): Promise<void> {
  let json: unknown
  try {
    json = JSON.parse(typeof raw === 'string' ? raw : new TextDecoder().decode(raw))
  } catch {
    c.log('invalid relay frame', { relay: link.att.relayId, error: 'not JSON' })
    return
  }
  if (!Array.isArray(json)) return onRelayFrame(c, link, json)
  if (json.length > RELAY_BATCH_FRAMES_MAX) {
    c.log('relay batch refused', { relay: link.att.relayId, frames: json.length, max: RELAY_BATCH_FRAMES_MAX })
    return closeLink(link.ws, CLOSE.PROTOCOL, `a batch may hold at most ${RELAY_BATCH_FRAMES_MAX} frames`)
  }
  // The attachment is read again for each frame: one (a hello) may change it for the frames after it.
  await Promise.all(json.map((item: unknown) => onRelayFrame(c, { ws: link.ws, att: attachmentOf(link.ws) ?? link.att }, item)))
}

async function onRelayFrame(c: HubContext, link: Link, json: unknown): Promise<void> {
  const result = parse(json)
  if ('error' in result) {
    c.log('invalid relay frame', { relay: link.att.relayId, error: result.error })
    if (result.id) sendFrame(link.ws, { type: 'reject', id: result.id, sid: null, reason: 'invalid' })
    return
  }
  const { frame } = result
  if (link.att.instance) c.framesSeen.set(link.att.instance, Date.now())
  switch (frame.type) {
    case 'hello':
      return onHello(c, link, frame)
    case 'ping':
      // The auto-response answers heartbeats without waking the object; this only runs if it is not installed.
      link.ws.send(PONG_TEXT)
      return
    case 'draining':
      setAttachment(link.ws, { ...link.att, draining: true })
      c.log('relay draining', { relay: link.att.relayId, instance: link.att.instance })
      return
    case 'probe_result':
      return answer(c, c.probes, link, frame.id, frame.state)
    case 'login_result':
      return answer(c, c.logins, link, frame.id, frame.outcome)
    case 'action_result':
      return answer(c, c.actions, link, frame.id, frame.outcome)
    default:
      return onSessionFrame(c, link, frame)
  }
}

/** Settles the question `id` with `value` when it was asked on this link; an answer from any other link is dropped. */
function answer<T>(c: HubContext, pending: Map<string, Pending<T>>, link: Link, id: string, value: T): void {
  const asked = pending.get(id)
  if (!asked) return
  if (asked.ws === link.ws) asked.settle(value)
  else c.log('answer from another link dropped', { relay: link.att.relayId, id })
}
