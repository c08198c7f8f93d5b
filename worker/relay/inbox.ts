/**
 * Frames from a relay, parsed with the shared protocol and routed to the account's Durable Object. Session frames
 * are checked against the lease (same relay process, same fencing number) and handled in order per session; each
 * is acked only after the AccountDO has committed what it carries, so the relay resends whatever is not acked.
 */
import { CLOSE, PONG_TEXT, RELAY_BATCH_FRAMES_MAX, RelayFrame, type FrameOf, type QueuedSend } from '../../schema/frames'
import { HELLO_SESSIONS_MAX, INBOUND_BUFFER_MAX } from './budgets'
import { tenantsWithOwnRelays } from '../db/relays'
import { accountStub } from '../lib/objects'
import type { AccountRef } from '../account/storage'
import type { HubContext, Pending } from './hub-context'
import { inSessionOrder } from './hub-context'
import type { SessionRow } from './hub-store'
import { attachmentOf, closeLink, openLinks, sendFrame, setAttachment, type Link } from './links'
import { inScope, placeWaiting } from './placement'

type SessionFrame = Exclude<RelayFrame, { type: 'hello' | 'ping' | 'draining' | 'probe_result' | 'login_result' | 'action_result' }>

export function refOf(row: SessionRow): AccountRef {
  return { tenantId: row.tenantId, accountId: row.accountId, channel: row.channel }
}

export function sendQueued(link: Link, row: SessionRow, sends: QueuedSend[]): void {
  for (const s of sends) sendFrame(link.ws, { type: 'send', sid: row.sid, fence: row.fence, message: s.message, expiresAt: s.expiresAt })
}

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

/**
 * The handshake. A relay process that reconnects lists the sessions it still runs: those it still holds (same
 * fencing number) stay with it and get their queued sends again; any other is stopped. Sessions the edge thought it
 * held but it no longer runs are placed anew. Then waiting sessions are placed, possibly on this link.
 */
async function onHello(c: HubContext, link: Link, hello: FrameOf<'hello'>): Promise<void> {
  if (hello.sessions.length > HELLO_SESSIONS_MAX) {
    c.log('relay hello refused', { relay: link.att.relayId, sessions: hello.sessions.length, max: HELLO_SESSIONS_MAX })
    return closeLink(link.ws, CLOSE.PROTOCOL, `a hello may list at most ${HELLO_SESSIONS_MAX} sessions`)
  }
  for (const other of openLinks(c.ctx)) {
    // A half-open socket of the same process: the process is here again, the old socket is dead.
    if (other.ws !== link.ws && other.att.instance === hello.instance && other.att.relayId === link.att.relayId) {
      closeLink(other.ws, 4000, 'superseded by a new connection')
    }
  }
  const att = { ...link.att, instance: hello.instance, version: hello.version, driver: hello.driver, channels: hello.channels, draining: hello.draining }
  setAttachment(link.ws, att)
  const live: Link = { ws: link.ws, att }
  c.framesSeen.set(hello.instance, Date.now())
  sendFrame(link.ws, {
    type: 'welcome',
    relayId: att.relayId,
    tenantId: att.tenantId,
    leaseMs: c.config.leaseMs,
    heartbeatMs: c.config.heartbeatMs,
    batches: true,
  })

  const now = Date.now()
  const listed = new Map(hello.sessions.map((s) => [s.sid, s.fence]))
  const rebound: SessionRow[] = []
  for (const row of c.store.heldBy(hello.instance)) {
    // Same process and same token: a link under another token never inherits sessions, whatever instance it claims.
    if (row.relayId !== att.relayId) continue
    if (listed.get(row.sid) === row.fence) {
      c.store.rebind(row.sid)
      rebound.push(row)
      listed.delete(row.sid)
    } else {
      // Not running it (or under another fence, which is then stopped below): it is placed anew.
      c.store.unassign(row.sid, now)
    }
  }
  for (const [sid, fence] of listed) sendFrame(link.ws, { type: 'revoke', sid, fence, reason: 'stale' })
  c.log('relay hello', { relay: att.relayId, instance: hello.instance, version: hello.version, rebound: rebound.length, stale: listed.size })

  for (const row of rebound) {
    void inSessionOrder(c, row.sid, async () => {
      sendQueued(live, row, await accountStub(c.env, row.tenantId, row.accountId).relayAttached(refOf(row), row.sid))
    }).catch((err: unknown) => c.log('resend after rebind failed', { sid: row.sid, error: String(err) }))
  }
  await placeWaiting(c)
  await c.rearm()
}

/**
 * What a relay observed while it held the session (messages, receipts, hand-overs) is still true after the session
 * moved: it is accepted from an earlier holder in scope (ids de-duplicate it), so nothing is lost in a failover.
 * Everything that steers the session (state, session writes, contacts, release) is for the current holder only.
 */
const DATA_FRAMES: ReadonlySet<SessionFrame['type']> = new Set(['inbound', 'receipt', 'sent', 'send_failed', 'reaction', 'risk'])

/** The frame comes from the process holding the session's lease, under its current fencing number. */
function isHolder(row: SessionRow, link: Link, frame: SessionFrame): boolean {
  return row.instance === link.att.instance && row.relayId === link.att.relayId && row.fence === frame.fence
}

/**
 * Data a link observed while it held the session, accepted from a link whose scope covers the tenant as placement
 * sees it (placement.ts inScope): its own tenant's token, or a service relay for a tenant that runs no relay of its
 * own. So the service's relays cannot put frames into the sessions of a tenant that keeps its own. `tenantsWithOwn`
 * is read (one D1 query) only when a service relay sends such a frame, which a healthy failover rarely does.
 */
async function lateData(link: Link, row: SessionRow, frame: SessionFrame, tenantsWithOwn: () => Promise<ReadonlySet<string>>): Promise<boolean> {
  if (!DATA_FRAMES.has(frame.type) || frame.fence > row.fence) return false
  if (link.att.tenantId !== null) return link.att.tenantId === row.tenantId
  return inScope(link, row, await tenantsWithOwn())
}

/** The tenants with relays of their own, read at most once per use. */
function tenantsWithOwnOnce(c: HubContext): () => Promise<ReadonlySet<string>> {
  let read: Promise<ReadonlySet<string>> | undefined
  return () => (read ??= tenantsWithOwnRelays(c.db))
}

function reject(link: Link, frame: SessionFrame, reason: 'stale_fence' | 'unknown_session' | 'invalid'): void {
  sendFrame(link.ws, { type: 'reject', id: frame.id, sid: frame.sid, fence: frame.fence, reason })
}

/** At most this many inbound messages go into one AccountDO call (one D1 batch of three statements each). */
export const INBOUND_BATCH_MAX = 50

/**
 * Inbound frames are group-committed: they wait in a per-session buffer, and the session's next turn stores all of
 * them in one AccountDO call (one D1 commit). A lone message goes at once; a burst is stored batch by batch, in order.
 */
function onInboundFrame(c: HubContext, link: Link, frame: FrameOf<'inbound'>): Promise<void> {
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
  for (const item of items) {
    const ok = row !== undefined && (isHolder(row, item.link, item.frame) || (await lateData(item.link, row, item.frame, tenantsWithOwn)))
    if (ok) accepted.push(item)
    else reject(item.link, item.frame, row ? 'stale_fence' : 'unknown_session')
  }
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
function onReceiptFrame(c: HubContext, link: Link, frame: FrameOf<'receipt'>): Promise<void> {
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

async function onSessionFrame(c: HubContext, link: Link, frame: SessionFrame): Promise<void> {
  if (!link.att.instance) return reject(link, frame, 'invalid')
  if (frame.type === 'receipt') return onReceiptFrame(c, link, frame)
  // Any other frame closes the session's receipt run: receipts after it queue behind it.
  c.receipts.delete(frame.sid)
  if (frame.type === 'inbound') return onInboundFrame(c, link, frame)
  await inSessionOrder(c, frame.sid, async () => {
    // Checked when the frame's turn comes: the session may have moved while earlier frames were handled.
    const row = c.store.bySid(frame.sid)
    if (!row) return reject(link, frame, 'unknown_session')
    if (!isHolder(row, link, frame) && !(await lateData(link, row, frame, tenantsWithOwnOnce(c)))) return reject(link, frame, 'stale_fence')
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
