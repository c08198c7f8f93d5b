/**
 * Leases with fencing. A relay process holds each of its sessions for as long as its heartbeats keep coming; when
 * they stop (link closed, silent, revoked), its sessions may move only once the lease has lapsed: `leaseMs` after the
 * last heartbeat the edge saw. The relay stops its own sessions before that moment (it counts from when it *sent*
 * that heartbeat, which is earlier), so two relays never run one session at once. Each new holder gets a higher
 * fencing number, and frames carrying an older one are refused.
 */
import { CLOSE } from '../../schema/frames'
import { accountStub } from '../lib/objects'
import type { HubContext } from './hub-context'
import { closeLink, lastSeen, openLinks, type Link } from './links'
import { placeWaiting } from './placement'

/** A link went away (closed, errored, revoked, silent): its sessions lapse `leaseMs` after it was last heard. */
export function linkGone(c: HubContext, link: Link, seenAt: number): void {
  const instance = link.att.instance
  if (!instance) return
  // A reconnect of the same process may already be up on a new socket; then its sessions stay where they are.
  const again = openLinks(c.ctx).some((l) => l.ws !== link.ws && l.att.instance === instance && l.att.relayId === link.att.relayId)
  if (again) return
  const sessions = c.store.startLeaseExpiry(instance, seenAt + c.config.leaseMs)
  if (sessions > 0) c.log('relay link gone', { relay: link.att.relayId, instance, sessions, lease_until: seenAt + c.config.leaseMs })
}

/** The alarm: silent links are cut, lapsed leases free their sessions, and sessions left without a relay are reported. */
export async function leaseTick(c: HubContext): Promise<void> {
  const now = Date.now()
  for (const link of openLinks(c.ctx)) {
    const seen = lastSeen(c.ctx, link, c.framesSeen)
    if (now - seen > c.config.leaseMs) {
      closeLink(link.ws, CLOSE.HEARTBEAT_TIMEOUT, 'no heartbeat')
      linkGone(c, link, seen)
    }
  }

  for (const row of c.store.lapsed(now)) {
    c.store.unassign(row.sid, now)
    c.log('lease lapsed', { sid: row.sid, tenant: row.tenantId, account: row.accountId, fence: row.fence })
  }
  await placeWaiting(c)

  const reportBefore = Date.now() - c.config.unassignedGraceMs
  for (const row of c.store.lostSince(reportBefore)) {
    c.store.markLostReported(row.sid)
    await accountStub(c.env, row.tenantId, row.accountId)
      .relayLost({ tenantId: row.tenantId, accountId: row.accountId, channel: row.channel }, row.sid)
      .catch((err: unknown) => c.log('relay lost report failed', { sid: row.sid, error: String(err) }))
  }
}

/**
 * The next moment the hub must look: a lease lapsing, a report due, or the moment a live link could first count as
 * silent (`leaseMs` after it was last heard). Heartbeats are answered by the auto-response without waking the object
 * and only move that moment on, so an idle link wakes the hub about once per lease, not once per heartbeat.
 */
export function nextCheckAt(c: HubContext): number | null {
  const due = c.store.nextDue(c.config.unassignedGraceMs)
  // +1: a link is silent once strictly more than `leaseMs` has passed (leaseTick).
  const silentAt = openLinks(c.ctx).map((link) => lastSeen(c.ctx, link, c.framesSeen) + c.config.leaseMs + 1)
  const all = [due, ...silentAt].filter((x): x is number => x !== null)
  return all.length > 0 ? Math.min(...all) : null
}
