/**
 * Which relay runs which session. A waiting session goes to the least loaded live relay that may take it: one that
 * serves its channel, is not draining, and is in scope. Scope: a tenant that registered relays of its own (a
 * tenant-scoped token) is served by those only, never by the service's relays (its session keys stay on its own
 * machines); every other tenant is served by the service-wide relays.
 */
import type { FrameOf } from '../../schema/frames'
import { tenantsWithOwnRelays } from '../db/relays'
import type { HubContext } from './hub-context'
import type { SessionRow } from './hub-store'
import { helloedLinks, sendFrame, type Link } from './links'

type LiveLink = Link & { att: { instance: string } }

export function inScope(link: { att: { tenantId: string | null } }, row: Pick<SessionRow, 'tenantId'>, tenantsWithOwn: ReadonlySet<string>): boolean {
  if (link.att.tenantId !== null) return link.att.tenantId === row.tenantId
  return !tenantsWithOwn.has(row.tenantId)
}

/** The least loaded eligible link (ties: the longest connected, which is the most likely to stay). */
export function pickLink(row: SessionRow, links: LiveLink[], loads: Map<string, number>, tenantsWithOwn: Set<string>): LiveLink | null {
  let best: LiveLink | null = null
  for (const l of links) {
    if (l.att.draining || !l.att.channels.includes(row.channel) || !inScope(l, row, tenantsWithOwn)) continue
    if (!best) {
      best = l
      continue
    }
    const a = loads.get(l.att.instance) ?? 0
    const b = loads.get(best.att.instance) ?? 0
    if (a < b || (a === b && l.att.connectedAt < best.att.connectedAt)) best = l
  }
  return best
}

export function assignFrame(row: SessionRow): FrameOf<'assign'> {
  return {
    type: 'assign',
    sid: row.sid,
    fence: row.fence,
    account: { tenantId: row.tenantId, accountId: row.accountId, channel: row.channel, phone: row.phone },
    linkMethod: row.linkMethod,
    forceNew: row.forceNew,
    importContacts: row.importContacts,
    passkeyLinking: row.passkeyLinking,
  }
}

/**
 * Places every waiting session it can. The one D1 read comes first; the placement loop after it has no await, so
 * two rounds running side by side cannot hand the same session out twice.
 */
export async function placeWaiting(c: HubContext): Promise<number> {
  if (c.store.unassigned().length === 0) return 0
  if (!helloedLinks(c.ctx).some((l) => !l.att.draining)) return 0
  const tenantsWithOwn = await tenantsWithOwnRelays(c.db)

  const now = Date.now()
  const links = helloedLinks(c.ctx)
  const loads = c.store.loads()
  let placed = 0
  for (const waiting of c.store.unassigned()) {
    const link = pickLink(waiting, links, loads, tenantsWithOwn)
    if (!link) continue
    const row = c.store.assign(waiting.sid, link.att.relayId, link.att.instance, now)
    loads.set(link.att.instance, (loads.get(link.att.instance) ?? 0) + 1)
    sendFrame(link.ws, assignFrame(row))
    // force_new wipes the stored session once; a later move of the same session must resume it instead.
    if (row.forceNew) c.store.clearForceNew(row.sid)
    c.log('session assigned', {
      sid: row.sid,
      tenant: row.tenantId,
      account: row.accountId,
      relay: link.att.relayId,
      instance: link.att.instance,
      fence: row.fence,
    })
    placed++
  }
  return placed
}
