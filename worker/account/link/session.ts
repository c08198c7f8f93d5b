/**
 * An alpha/beta account's link, inside its AccountDO: starting (or restarting) the session through the relay hub,
 * taking the relay's state reports, and moving the account's status with its `account.*` event in one D1 batch
 * (connected, disconnected with a reason, restricted). The warm-up ramp counts the connected days.
 */
import type { SessionState } from '../../../schema/frames'
import { getAccount, type AccountRow } from '../../db/accounts'
import type { AccountStatus } from '../../../schema/d1'
import { newId } from '../../lib/ids'
import { relayHub } from '../../lib/objects'
import type { QueuedSend } from '../../relay/inbox'
import type { AccountContext } from '../context'
import { failQueued } from '../delivery'
import { statusChange } from '../lifecycle'
import { LINK_KEY, LinkState, SESSION_FENCE_KEY, linkView, type LinkOptions, type LinkView } from './state'
import { NEW_RAMP, rampConnected, rampDisconnected } from '../ramp'
import { queuedSends } from './outbound'
import type { AccountRef } from '../storage'

export type ConnectInput = {
  ref: AccountRef
  phone: string
  linkMethod: 'qr' | 'pairing_code' | 'code'
  forceNew: boolean
  options: LinkOptions
  /** With a pairing code: how long to wait for the relay to report it. */
  waitForCodeMs: number
}

export type ConnectOutcome = { sid: string; assigned: boolean; view: LinkView }

export function currentLink(c: AccountContext): LinkState | undefined {
  return c.store.get(LINK_KEY, LinkState)
}

function saveLink(c: AccountContext, link: LinkState): void {
  c.store.put(LINK_KEY, link)
  c.linkSignal.notify()
}

/**
 * Starts or restarts the session. `force_new` discards the stored session (here and, through the relay, upstream
 * state kept by the driver) and starts a new session id; otherwise the same session resumes or links again.
 */
export async function connectLink(c: AccountContext, input: ConnectInput): Promise<ConnectOutcome> {
  const now = Date.now()
  c.store.setRef(input.ref)
  const existing = currentLink(c)
  const fresh = input.forceNew || !existing
  if (input.forceNew) c.store.clearSessionEntries()
  const link: LinkState = {
    sid: fresh ? newId('ses') : existing.sid,
    phone: input.phone,
    linkMethod: input.linkMethod,
    options: input.options,
    session: 'starting',
    qr: null,
    qrExpiresAt: null,
    pairingCode: null,
    pairingCodeExpiresAt: null,
    problem: null,
    message: null,
    identifier: existing?.identifier ?? null,
    startedAt: now,
    lastActivityAt: existing?.lastActivityAt ?? null,
    relayAssigned: false,
    relayLost: false,
    contactsImported: fresh ? false : existing.contactsImported,
  }
  saveLink(c, link)
  const channel = input.ref.channel === 'beta' ? 'beta' : 'alpha_web'
  const placed = await relayHub(c.env).openSession({
    sid: link.sid,
    tenantId: input.ref.tenantId,
    accountId: input.ref.accountId,
    channel,
    phone: input.phone,
    linkMethod: input.linkMethod,
    forceNew: input.forceNew,
    importContacts: input.options.importContacts,
  })
  const afterPlace = currentLink(c)
  if (afterPlace && afterPlace.sid === link.sid && placed.assigned && !afterPlace.relayAssigned) saveLink(c, { ...afterPlace, relayAssigned: true })

  // A pairing code, and beta's first login step (code sent, or the QR login token), belong in the connect answer.
  if ((input.linkMethod === 'pairing_code' || input.ref.channel === 'beta') && placed.assigned) {
    await c.linkSignal.until(() => {
      const l = currentLink(c)
      return (
        !l ||
        l.sid !== link.sid ||
        l.pairingCode !== null ||
        l.qr !== null ||
        ['code_required', 'password_required', 'connected', 'disconnected', 'restricted'].includes(l.session)
      )
    }, input.waitForCodeMs)
  }
  return { sid: link.sid, assigned: placed.assigned, view: linkView(currentLink(c), Date.now()) }
}

/** The account's status moves with its event in one batch (account/lifecycle.ts); nothing is written when it does not change. */
async function moveAccount(c: AccountContext, ref: AccountRef, to: AccountStatus, reason: string | null): Promise<AccountRow | undefined> {
  const account = await getAccount(c.db, ref.tenantId, ref.accountId)
  if (!account) return undefined
  const now = Date.now()
  const change = statusChange(c.db, account, to, reason, now)
  const [first, ...rest] = change.statements
  if (first) await c.commit([first, ...rest])
  const ramp = c.store.ramp() ?? NEW_RAMP
  if (to === 'connected') c.store.setRamp(rampConnected(ramp, now))
  else if (account.status === 'connected') c.store.setRamp(rampDisconnected(ramp, now))
  return change.account
}

/** The link after a state report (pure: the probe of the status endpoint uses it without saving). */
export function withState(link: LinkState, state: SessionState, at: number): LinkState {
  const base: LinkState = { ...link, lastActivityAt: Math.max(at, link.lastActivityAt ?? 0), relayAssigned: true, relayLost: false }
  switch (state.state) {
    case 'qr_pending':
      return { ...base, session: 'qr_pending', qr: state.qr, qrExpiresAt: state.expiresAt, problem: null, message: null }
    case 'pairing_code':
      return { ...base, session: 'pairing_code', qr: null, pairingCode: state.code, pairingCodeExpiresAt: state.expiresAt, problem: null, message: null }
    case 'connecting':
      return { ...base, session: 'connecting', qr: null, problem: null, message: null }
    case 'code_required':
    case 'password_required':
      return { ...base, session: state.state, qr: null, qrExpiresAt: null, problem: null, message: null }
    case 'connected':
      return {
        ...base,
        session: 'connected',
        qr: null,
        qrExpiresAt: null,
        pairingCode: null,
        pairingCodeExpiresAt: null,
        problem: null,
        message: null,
        identifier: state.identifier,
        upstreamUserId: state.upstreamUserId,
      }
    case 'slowed':
      // Still connected; the reason says why sends wait (beta's slow-down) and until when.
      return {
        ...base,
        session: 'connected',
        qr: null,
        problem: state.problem,
        message: `${state.message} Sends resume at ${new Date(state.until).toISOString()}.`,
      }
    case 'disconnected':
    case 'restricted':
      return { ...base, session: state.state, qr: null, pairingCode: null, problem: state.problem, message: state.message }
  }
}

/** A state report from the relay running the session. Answers the queued sends to hand over once it is connected. */
export async function onRelayState(c: AccountContext, ref: AccountRef, sid: string, state: SessionState, at: number): Promise<{ resend: QueuedSend[] }> {
  const link = currentLink(c)
  if (!link || link.sid !== sid) return { resend: [] }
  saveLink(c, withState(link, state, at))
  if (state.state === 'slowed') {
    // Connected, with the pause as the account's status_reason (GET /accounts) until the relay says connected again.
    await moveAccount(c, ref, 'connected', state.problem)
    return { resend: [] }
  }
  if (state.state === 'connected') {
    await moveAccount(c, ref, 'connected', null)
    return { resend: await queuedSends(c, ref) }
  }
  if (state.state === 'disconnected' || state.state === 'restricted') {
    await moveAccount(c, ref, state.state, state.problem)
    // The account can no longer send: what is still queued fails now with the reason, instead of after 10 minutes.
    // Except an upstream outage (`unresponsive`): the relay keeps retrying and reports connected when it is back, so
    // what is queued waits for that (the queued sends are handed over again), within the usual 10 minutes.
    if (state.problem !== 'unresponsive') await failQueued(c, `${state.problem}: ${state.message}`)
  }
  return { resend: [] }
}

/** The hub found no relay for a connected session within its grace period: the account cannot send until one returns. */
export async function onRelayLost(c: AccountContext, ref: AccountRef, sid: string): Promise<void> {
  const link = currentLink(c)
  if (!link || link.sid !== sid || link.session !== 'connected') return
  saveLink(c, { ...link, relayLost: true })
  await moveAccount(c, ref, 'disconnected', 'relay_unavailable')
}

/**
 * The account is being removed: its relay logs the session out upstream if one is reachable, and the link and its
 * session fence are forgotten, so adding the number again starts a new session id (issue 14 §1: the old id and fence
 * left behind made every write of the new session look stale).
 */
export async function removeLink(c: AccountContext): Promise<{ reached: boolean }> {
  const link = currentLink(c)
  if (!link) return { reached: false }
  c.store.delete(LINK_KEY)
  c.store.delete(SESSION_FENCE_KEY)
  c.linkSignal.notify()
  try {
    return await relayHub(c.env).logoutSession(link.sid)
  } catch {
    // Removing succeeds locally even when the relay side is unreachable (spec 4.3).
    return { reached: false }
  }
}

export type LinkStatus = { link: LinkState | undefined; view: LinkView; live: boolean }

/** The link as last reported; with a probe timeout, the state asked live from the relay running it (`live`). */
export async function linkStatus(c: AccountContext, probeTimeoutMs: number | null): Promise<LinkStatus> {
  const link = currentLink(c)
  const cached = { link, view: linkView(link, Date.now()), live: false }
  if (!link || probeTimeoutMs === null) return cached
  const state = await relayHub(c.env).probeSession(link.sid, probeTimeoutMs)
  if (!state) return cached
  const probed = withState(link, state, Date.now())
  return { link: probed, view: linkView(probed, Date.now()), live: true }
}
