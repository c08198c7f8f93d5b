/**
 * A relay's hello, the handshake of a link: the process says who it is and which sessions it still runs, and the hub
 * answers with a welcome, keeps or stops each listed session, and places the sessions waiting for a relay.
 */
import { CLOSE, type FrameOf } from '../../schema/frames'
import { HELLO_SESSIONS_MAX } from './budgets'
import { accountStub } from '../lib/objects'
import type { HubContext } from './hub-context'
import { inSessionOrder } from './hub-context'
import type { SessionRow } from './hub-store'
import { closeLink, openLinks, sendFrame, setAttachment, type Link } from './links'
import { placeWaiting } from './placement'
import { refOf, sendQueued } from './session-frame'

/**
 * The handshake. A relay process that reconnects lists the sessions it still runs: those it still holds (same
 * fencing number) stay with it and get their queued sends again; any other is stopped. Sessions the edge thought it
 * held but it no longer runs are placed anew. Then waiting sessions are placed, possibly on this link.
 */
export async function onHello(c: HubContext, link: Link, hello: FrameOf<'hello'>): Promise<void> {
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
