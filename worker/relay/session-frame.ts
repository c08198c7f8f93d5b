/**
 * One session frame at the hub: which frames belong to a session, whether a link may send one (the holder of the
 * session's lease, or late data from an earlier holder in scope), and the hub's answers on a session (a reject, the
 * account's queued sends, the account the session row names).
 */
import type { QueuedSend, RelayFrame } from '../../schema/frames'
import { tenantsWithOwnRelays } from '../db/relays'
import type { AccountRef } from '../account/storage'
import type { HubContext } from './hub-context'
import type { SessionRow } from './hub-store'
import { sendFrame, type Link } from './links'
import { inScope } from './placement'

export type SessionFrame = Exclude<RelayFrame, { type: 'hello' | 'ping' | 'draining' | 'probe_result' | 'login_result' | 'action_result' }>

export function refOf(row: SessionRow): AccountRef {
  return { tenantId: row.tenantId, accountId: row.accountId, channel: row.channel }
}

export function sendQueued(link: Link, row: SessionRow, sends: QueuedSend[]): void {
  for (const s of sends) sendFrame(link.ws, { type: 'send', sid: row.sid, fence: row.fence, message: s.message, expiresAt: s.expiresAt })
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

/**
 * Whether the hub takes `frame` for the session `row` (read when the frame's turn comes: the session may have moved
 * meanwhile): from its holder, or late data in scope. A frame it does not take is rejected on its link, `stale_fence`
 * or, for a session the hub no longer knows, `unknown_session`, and the relay stops resending it.
 */
export async function admitted(
  link: Link,
  row: SessionRow | undefined,
  frame: SessionFrame,
  tenantsWithOwn: () => Promise<ReadonlySet<string>>
): Promise<boolean> {
  if (row && (isHolder(row, link, frame) || (await lateData(link, row, frame, tenantsWithOwn)))) return true
  reject(link, frame, row ? 'stale_fence' : 'unknown_session')
  return false
}

/** The tenants with relays of their own, read at most once per use. */
export function tenantsWithOwnOnce(c: HubContext): () => Promise<ReadonlySet<string>> {
  let read: Promise<ReadonlySet<string>> | undefined
  return () => (read ??= tenantsWithOwnRelays(c.db))
}

export function reject(link: Link, frame: SessionFrame, reason: 'stale_fence' | 'unknown_session' | 'invalid'): void {
  sendFrame(link.ws, { type: 'reject', id: frame.id, sid: frame.sid, fence: frame.fence, reason })
}
