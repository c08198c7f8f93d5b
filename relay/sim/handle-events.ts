/** Every message from the simulated network, in one switch; each case hands off to a small handler. */
import { createHash, randomBytes } from 'node:crypto'
import type { ServerMsg } from './network/protocol'
import type { SimSession } from './session'
import { fromNetContact, fromNetMessage, fromNetReaction } from './convert'
import { onPaired, onPairingCode, onPasskeyRequired, onQr } from './login'

export async function handleEvent(s: SimSession, msg: ServerMsg): Promise<void> {
  switch (msg.t) {
    case 'qr':
      return onQr(s, msg)
    case 'pairing_code':
      return onPairingCode(s, msg)
    case 'paired':
      return onPaired(s, msg)
    case 'passkey_required':
      return onPasskeyRequired(s)
    case 'open':
      s.markOpen()
      s.emit({ state: 'connected', identifier: `+${msg.me.phone.replace(/^\+/, '')}`, upstreamUserId: msg.me.lid })
      return
    case 'message':
      return onMessage(s, msg)
    case 'receipt':
      s.transmit({ t: 'ack', ids: [msg.rid] })
      s.receive(msg.offline ?? false, () => s.events.receipt({ upstreamId: msg.id, status: msg.status }))
      return
    case 'offline':
      return s.offlineDone()
    case 'contacts':
      s.opts.events.contacts?.(msg.contacts.map(fromNetContact))
      return
    case 'send_ack':
      return s.settleSend(msg.id, null)
    case 'send_error':
      return s.settleSend(msg.id, { code: msg.code, reason: msg.reason })
    case 'reaction':
      // Acknowledged as it arrives, like a message (Baileys emits a reaction as a message upsert).
      s.transmit({ t: 'ack', ids: [msg.id] })
      s.receive(msg.offline, () => s.events.reaction?.(fromNetReaction(msg)))
      return
    case 'action_ack':
      return s.actions.ack(msg.rid, msg.onNetwork)
    case 'action_error':
      return s.actions.error(msg.rid, msg.code, msg.reason)
    case 'timelock':
      // Baileys: connection.update { reachoutTimeLock } from NotificationUserReachoutTimelockUpdate.
      s.events.risk?.({
        signal: 'reachout_timelock',
        active: msg.active,
        until: msg.active ? msg.until : null,
        detail: msg.active ? 'The network put a reach-out time lock on the account: no new chats until it ends.' : 'The reach-out time lock was lifted.',
      })
      return
  }
}

async function onMessage(s: SimSession, msg: Extract<ServerMsg, { t: 'message' }>): Promise<void> {
  // A first message from someone sets up an encryption session with them, which the real driver persists: the
  // simulator writes one too, so the session store sees the same kind of traffic.
  const peerKey = `session-${createHash('sha256')
    .update(msg.from.lid ?? msg.from.phone ?? '')
    .digest('hex')
    .slice(0, 16)}`
  if (!s.knownPeers.has(peerKey)) {
    s.knownPeers.add(peerKey)
    void s.opts.store
      .write(new Map([[peerKey, randomBytes(32).toString('base64')]]))
      .catch((err: unknown) => s.opts.log.warn({ err: String(err) }, 'session write failed'))
  }
  // Acknowledged as it arrives, before it is handed over, as Baileys sends the delivery receipt before it emits the
  // message: the network will not send it again, so from here the relay must not lose it (client.ts: buffer, stop).
  s.transmit({ t: 'ack', ids: [msg.id] })
  // One with media is reported only once its file is stored: kept with the session meanwhile, as alpha's driver does.
  const release = msg.media ? await s.keep(msg) : null
  const inbound = fromNetMessage(msg)
  s.receive(msg.offline, () => s.events.inbound(release ? { ...inbound, onCommitted: release } : inbound))
}
