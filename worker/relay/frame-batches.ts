/**
 * Group commit of a session's inbound and receipt frames: they gather per session and go to the AccountDO in one call
 * (one D1 commit) when the session's turn comes, and are acked, per link, once it committed them.
 */
import type { FrameOf } from '../../schema/frames'
import { INBOUND_BUFFER_MAX } from './budgets'
import { accountStub } from '../lib/objects'
import type { HubContext } from './hub-context'
import { inSessionOrder } from './hub-context'
import type { SessionRow } from './hub-store'
import { sendFrame, type Link } from './links'
import { admitted, refOf, tenantsWithOwnOnce, type SessionFrame } from './session-frame'

/** At most this many inbound messages go into one AccountDO call (one D1 batch of three statements each). */
export const INBOUND_BATCH_MAX = 50

/**
 * Inbound frames are group-committed: they wait in a per-session buffer, and the session's next turn stores all of
 * them in one AccountDO call (one D1 commit). A lone message goes at once; a burst is stored batch by batch, in order.
 */
export function onInboundFrame(c: HubContext, link: Link, frame: FrameOf<'inbound'>): Promise<void> {
  let buffer = c.inbound.get(frame.sid)
  if (buffer) {
    // Full: not buffered and not acked, so the relay sends it again later (back-pressure instead of growth).
    if (buffer.length < INBOUND_BUFFER_MAX) buffer.push({ link, frame })
    return Promise.resolve()
  }
  buffer = [{ link, frame }]
  c.inbound.set(frame.sid, buffer)
  return inSessionOrder(c, frame.sid, () => flushInbound(c, frame.sid))
}

async function flushInbound(c: HubContext, sid: string): Promise<void> {
  const buffer = c.inbound.get(sid) ?? []
  const batch = buffer.splice(0, INBOUND_BATCH_MAX)
  if (buffer.length === 0) c.inbound.delete(sid)
  else void inSessionOrder(c, sid, () => flushInbound(c, sid))
  await commitAccepted(c, sid, 'inbound', batch, (account, row, frames) =>
    account.relayInbound(
      refOf(row),
      sid,
      frames.map((f) => f.message)
    )
  )
}

/**
 * The frames of one session that the hub accepts (from the holder, or late data in scope; the others are rejected),
 * handed to the AccountDO by `store` and acked once it committed them. A failed call acks nothing: the relay resends.
 */
async function commitAccepted<F extends SessionFrame>(
  c: HubContext,
  sid: string,
  type: F['type'],
  items: Array<{ link: Link; frame: F }>,
  store: (account: ReturnType<typeof accountStub>, row: SessionRow, frames: F[]) => Promise<unknown>
): Promise<void> {
  // Checked when the frames' turn comes: the session may have moved while earlier frames were handled.
  const row = c.store.bySid(sid)
  const tenantsWithOwn = tenantsWithOwnOnce(c)
  const accepted: typeof items = []
  for (const item of items) if (await admitted(item.link, row, item.frame, tenantsWithOwn)) accepted.push(item)
  if (!row || accepted.length === 0) return
  try {
    await store(
      accountStub(c.env, row.tenantId, row.accountId),
      row,
      accepted.map((a) => a.frame)
    )
  } catch (err) {
    // Not acked: the relay sends them again after its ack timeout or reconnect.
    c.log('relay frame failed', { sid, type, count: accepted.length, error: String(err) })
    return
  }
  ackByLink(accepted)
}

/** At most this many receipts go into one AccountDO call (one receipts group commit). */
export const RECEIPT_RUN_MAX = 50

/**
 * Consecutive receipts of a session (a read watermark, a burst of deliveries) go to the AccountDO in one call, in
 * order, instead of one awaited call each. A run stays open for more only until any other frame of the session is
 * queued (or its turn comes), so a receipt never moves ahead of a frame the relay sent before it.
 */
export function onReceiptFrame(c: HubContext, link: Link, frame: FrameOf<'receipt'>): Promise<void> {
  const open = c.receipts.get(frame.sid)
  if (open && open.length < RECEIPT_RUN_MAX) {
    open.push({ link, frame })
    return Promise.resolve()
  }
  const run = [{ link, frame }]
  c.receipts.set(frame.sid, run)
  return inSessionOrder(c, frame.sid, () => flushReceipts(c, frame.sid, run))
}

async function flushReceipts(c: HubContext, sid: string, run: Array<{ link: Link; frame: FrameOf<'receipt'> }>): Promise<void> {
  if (c.receipts.get(sid) === run) c.receipts.delete(sid)
  await commitAccepted(c, sid, 'receipt', run, (account, row, frames) =>
    account.receiptsFor(
      refOf(row),
      frames.map((f) => f.receipt)
    )
  )
}

/** One ack per link for the frames the AccountDO committed. */
function ackByLink(done: Array<{ link: Link; frame: { id: string } }>): void {
  const byLink = new Map<WebSocket, string[]>()
  for (const { link, frame } of done) byLink.set(link.ws, [...(byLink.get(link.ws) ?? []), frame.id])
  for (const [ws, ids] of byLink) sendFrame(ws, { type: 'ack', ids })
}
