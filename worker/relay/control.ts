/**
 * What the rest of the Worker asks of the hub (AccountDOs and the admin API, by RPC): open or restart a session,
 * hand a send to the relay holding it, log it out, probe it live, list and cut relay links.
 */
import {
  CLOSE,
  type ActionOutcome,
  type ChatAction,
  type EdgeFrame,
  type LoginOutcome,
  type LoginStep,
  type OutboundMessage,
  type SessionState,
} from '../../schema/frames'
import { newId } from '../lib/ids'
import type { HubContext, Pending } from './hub-context'
import type { SessionSpec } from './hub-store'
import { linkGone } from './leases'
import { closeLink, lastSeen, linkOf, openLinks, relayTag, sendFrame, type Link } from './links'
import { placeWaiting } from './placement'

export type OpenOutcome = { assigned: boolean; relayId: string | null }

/**
 * Opens (or restarts) an account's session. A session still held by a live relay is stopped there first and placed
 * again under a new fencing number (possibly on the same relay, which stops the old one before starting the new);
 * one whose holder vanished keeps its lease until it lapses, then moves with the new settings.
 */
export async function openSession(c: HubContext, spec: SessionSpec): Promise<OpenOutcome> {
  const now = Date.now()
  const existing = c.store.byAccount(spec.tenantId, spec.accountId)
  if (existing?.instance) {
    const holder = linkOf(c.ctx, existing)
    if (holder) {
      sendFrame(holder.ws, { type: 'revoke', sid: existing.sid, fence: existing.fence, reason: 'moved' })
      c.store.unassign(existing.sid, now)
    }
  }
  c.store.upsert(spec, now)
  await placeWaiting(c)
  await c.rearm()
  const row = c.store.byAccount(spec.tenantId, spec.accountId)
  return { assigned: !!row?.instance && row.leaseUntil === null, relayId: row?.leaseUntil === null ? (row?.relayId ?? null) : null }
}

/** Hands a send to the relay holding the session; false when no live relay holds it (it stays queued). */
export function dispatchSend(c: HubContext, sid: string, message: OutboundMessage, expiresAt: number): boolean {
  const row = c.store.bySid(sid)
  if (!row || row.leaseUntil !== null) return false
  const link = linkOf(c.ctx, row)
  if (!link || link.att.draining) return false
  return sendFrame(link.ws, { type: 'send', sid, fence: row.fence, message, expiresAt })
}

/** The account is removed: its relay logs the session out upstream (when one is reachable) and the session is forgotten. */
export function logoutSession(c: HubContext, sid: string): { reached: boolean } {
  const row = c.store.bySid(sid)
  if (!row) return { reached: false }
  const link = row.leaseUntil === null ? linkOf(c.ctx, row) : undefined
  const reached = link ? sendFrame(link.ws, { type: 'logout', sid, fence: row.fence }) : false
  c.store.remove(sid)
  c.log('session removed', { sid, tenant: row.tenantId, account: row.accountId, reached })
  return { reached }
}

/** Sends `frame` to `link` and waits for the answer with `id` on that same link; null after `timeoutMs` or a lost send. */
function ask<T>(pending: Map<string, Pending<T>>, link: Link, id: string, frame: EdgeFrame, timeoutMs: number): Promise<T | null> {
  return new Promise<T | null>((resolve) => {
    const timer = setTimeout(() => settle(null), timeoutMs)
    const settle = (answer: T | null) => {
      clearTimeout(timer)
      pending.delete(id)
      resolve(answer)
    }
    pending.set(id, { ws: link.ws, settle })
    if (!sendFrame(link.ws, frame)) settle(null)
  })
}

/** Asks the relay holding the session for its live state; null when none answers within `timeoutMs`. */
export async function probeSession(c: HubContext, sid: string, timeoutMs: number): Promise<SessionState | null> {
  const row = c.store.bySid(sid)
  if (!row || row.leaseUntil !== null) return null
  const link = linkOf(c.ctx, row)
  if (!link) return null
  const id = newId('prb', 16)
  return ask(c.probes, link, id, { type: 'probe', id, sid }, timeoutMs)
}

/**
 * beta: hands the code or password the user typed to the relay holding the session and waits for its verdict; null
 * when no relay holds it or none answers within `timeoutMs`. The step is in this one frame and nowhere else.
 */
export async function loginStep(c: HubContext, sid: string, step: LoginStep, timeoutMs: number): Promise<LoginOutcome | null> {
  const row = c.store.bySid(sid)
  if (!row || row.leaseUntil !== null) return null
  const link = linkOf(c.ctx, row)
  if (!link) return null
  const id = newId('lgn', 16)
  return ask(c.logins, link, id, { type: 'login', id, sid, fence: row.fence, step }, timeoutMs)
}

/**
 * A chat action (issue 25: a reaction, typing, a read mark, a lookup) for the relay holding the session, answered once;
 * null when no relay holds it or none answers within `timeoutMs`. Never queued: a late typing or read mark is worse
 * than none, and the caller may repeat a reaction.
 */
export async function chatAction(c: HubContext, sid: string, action: ChatAction, timeoutMs: number): Promise<ActionOutcome | null> {
  const row = c.store.bySid(sid)
  if (!row || row.leaseUntil !== null) return null
  const link = linkOf(c.ctx, row)
  if (!link || link.att.draining) return null
  const id = newId('act', 16)
  return ask(c.actions, link, id, { type: 'action', id, sid, fence: row.fence, action }, timeoutMs)
}

export type RelayLinkView = {
  relay_id: string
  tenant_id: string | null
  instance: string | null
  version: string | null
  driver: string | null
  channels: string[]
  draining: boolean
  connected_at: number
  last_seen_at: number
  sessions: Array<{ session_id: string; tenant_id: string; account_id: string; fence: number }>
}

export function relayLinks(c: HubContext): RelayLinkView[] {
  const rows = c.store.all()
  return openLinks(c.ctx).map((l) => ({
    relay_id: l.att.relayId,
    tenant_id: l.att.tenantId,
    instance: l.att.instance,
    version: l.att.version,
    driver: l.att.driver,
    channels: l.att.channels,
    draining: l.att.draining,
    connected_at: l.att.connectedAt,
    last_seen_at: lastSeen(c.ctx, l, c.framesSeen),
    sessions: rows
      .filter((r) => r.instance !== null && r.instance === l.att.instance && r.leaseUntil === null)
      .map((r) => ({ session_id: r.sid, tenant_id: r.tenantId, account_id: r.accountId, fence: r.fence })),
  }))
}

/** A revoked token: every link using it is closed now; its sessions move once their leases lapse. */
export async function cutRelay(c: HubContext, relayId: string): Promise<number> {
  const links = openLinks(c.ctx, relayTag(relayId))
  for (const link of links) {
    const seen = lastSeen(c.ctx, link, c.framesSeen)
    closeLink(link.ws, CLOSE.REVOKED, 'relay token revoked')
    linkGone(c, link, seen)
  }
  await c.rearm()
  return links.length
}
