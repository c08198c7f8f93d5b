/**
 * The session frames other than inbound and receipts (state, send reports, contacts, reactions, risk, the session's
 * storage, release): handled one at a time in the session's order, each acked once the AccountDO has handled it.
 */
import { accountStub } from '../lib/objects'
import type { HubContext } from './hub-context'
import { inSessionOrder } from './hub-context'
import type { SessionRow } from './hub-store'
import { sendFrame, type Link } from './links'
import { placeWaiting } from './placement'
import { onInboundFrame, onReceiptFrame } from './frame-batches'
import { admitted, refOf, reject, sendQueued, tenantsWithOwnOnce, type SessionFrame } from './session-frame'

export async function onSessionFrame(c: HubContext, link: Link, frame: SessionFrame): Promise<void> {
  if (!link.att.instance) return reject(link, frame, 'invalid')
  if (frame.type === 'receipt') return onReceiptFrame(c, link, frame)
  // Any other frame closes the session's receipt run: receipts after it queue behind it.
  c.receipts.delete(frame.sid)
  if (frame.type === 'inbound') return onInboundFrame(c, link, frame)
  await inSessionOrder(c, frame.sid, async () => {
    // Checked when the frame's turn comes: the session may have moved while earlier frames were handled.
    const row = c.store.bySid(frame.sid)
    // `!row` only narrows the type: a frame for an unknown session is never admitted (it is rejected as such).
    if (!(await admitted(link, row, frame, tenantsWithOwnOnce(c))) || !row) return
    try {
      await handle(c, link, row, frame)
    } catch (err) {
      // Not acked: the relay sends it again after its ack timeout or reconnect.
      c.log('relay frame failed', { sid: row.sid, type: frame.type, error: String(err) })
    }
  })
}

async function handle(c: HubContext, link: Link, row: SessionRow, frame: Exclude<SessionFrame, { type: 'inbound' | 'receipt' }>): Promise<void> {
  const account = accountStub(c.env, row.tenantId, row.accountId)
  const ref = refOf(row)
  const ack = (): void => void sendFrame(link.ws, { type: 'ack', ids: [frame.id] })
  switch (frame.type) {
    case 'state': {
      const { resend } = await account.relayState(ref, row.sid, frame.state, frame.at)
      if (frame.state.state === 'connected') c.store.markConnected(row.sid, true)
      if (frame.state.state === 'disconnected' || frame.state.state === 'restricted') c.store.markConnected(row.sid, false)
      ack()
      sendQueued(link, row, resend)
      return
    }
    case 'sent':
      await account.relaySent(ref, row.sid, frame.messageId, frame.upstreamId)
      return ack()
    case 'send_failed':
      await account.relaySendFailed(ref, row.sid, frame.messageId, frame.error, frame.code)
      return ack()
    case 'contacts':
      await account.relayContacts(ref, row.sid, frame.contacts)
      return ack()
    case 'reaction':
      await account.relayReaction(ref, row.sid, frame.reaction)
      return ack()
    case 'risk':
      await account.relayRisk(ref, row.sid, frame.risk)
      return ack()
    case 'session_load': {
      const entries = await account.relaySessionLoad(ref, row.sid)
      sendFrame(link.ws, { type: 'session_data', id: frame.id, sid: row.sid, entries })
      return
    }
    case 'session_write': {
      const refused = await account.relaySessionWrite(ref, row.sid, frame.fence, frame.clear, frame.changes)
      if (refused === null) return ack()
      // The hub's lease said yes but the account said no: answered, so the relay stops instead of resending forever.
      c.log('session write refused', { sid: row.sid, relay: link.att.relayId, fence: frame.fence, reason: refused })
      return reject(link, frame, refused)
    }
    case 'released':
      c.store.unassign(row.sid, Date.now())
      c.log('session released', { sid: row.sid, relay: link.att.relayId, reason: frame.reason })
      ack()
      await placeWaiting(c)
      await c.rearm()
      return
  }
}
