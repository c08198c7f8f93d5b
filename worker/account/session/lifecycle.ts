/**
 * An alpha/beta account's session, inside its AccountDO: starting (or restarting) it through the relay hub, taking
 * the reports of the relay running it, and moving the account's status with its `account.*` event in one D1 batch
 * (connected, disconnected with a reason, restricted). The warm-up ramp counts the connected days.
 */
import type { QueuedSend, RelayChannel, SessionState } from '../../../schema/frames'
import { getAccount, type AccountRow } from '../../db/accounts'
import type { AccountStatus } from '../../../schema/d1'
import { newId } from '../../lib/ids'
import { relayHub } from '../../lib/objects'
import type { AccountContext } from '../context'
import { failQueued } from '../delivery'
import { statusChange } from '../../events/account-status'
import { passkeyAfter } from './passkey'
import { NO_PAIRING } from './pairing.shared'
import { SESSION_KEY, SESSION_FENCE_KEY, SessionRecord, pairingView, type PairingView, type SessionOptions } from './state'
import { NEW_RAMP, rampConnected, rampDisconnected } from '../ramp'
import { queuedSends } from './outbound'
import type { AccountRef } from '../storage'

export type ConnectInput = {
  /** A relay-run channel's account. */
  ref: AccountRef & { channel: RelayChannel }
  phone: string
  linkMethod: 'qr' | 'pairing_code' | 'code'
  forceNew: boolean
  options: SessionOptions
  /** With a pairing code: how long to wait for the relay to report it. */
  waitForCodeMs: number
  /** alpha: the tenant's alpha_passkey_linking setting (the relay may complete a passkey ceremony). */
  passkeyLinking?: boolean
}

export type ConnectOutcome = { sid: string; assigned: boolean; view: PairingView }

export function currentSession(c: AccountContext): SessionRecord | undefined {
  return c.store.get(SESSION_KEY, SessionRecord)
}

function saveSession(c: AccountContext, record: SessionRecord): void {
  c.store.put(SESSION_KEY, record)
  c.sessionSignal.notify()
}

/**
 * Starts or restarts the session. `force_new` discards the stored session (here and, through the relay, upstream
 * state kept by the driver) and starts a new session id; otherwise the same session resumes or links again.
 */
export async function connectSession(c: AccountContext, input: ConnectInput): Promise<ConnectOutcome> {
  const now = Date.now()
  c.store.setRef(input.ref)
  const existing = currentSession(c)
  const fresh = input.forceNew || !existing
  if (input.forceNew) c.store.clearSessionEntries()
  const record: SessionRecord = {
    sid: fresh ? newId('ses') : existing.sid,
    phone: input.phone,
    linkMethod: input.linkMethod,
    options: input.options,
    session: 'starting',
    ...NO_PAIRING,
    problem: null,
    message: null,
    identifier: existing?.identifier ?? null,
    startedAt: now,
    lastActivityAt: existing?.lastActivityAt ?? null,
    relayAssigned: false,
    relayLost: false,
    contactsImported: fresh ? false : existing.contactsImported,
  }
  saveSession(c, record)
  const placed = await relayHub(c.env).openSession({
    sid: record.sid,
    tenantId: input.ref.tenantId,
    accountId: input.ref.accountId,
    channel: input.ref.channel,
    phone: input.phone,
    linkMethod: input.linkMethod,
    forceNew: input.forceNew,
    importContacts: input.options.importContacts,
    passkeyLinking: input.passkeyLinking ?? false,
  })
  const afterPlace = currentSession(c)
  if (afterPlace && afterPlace.sid === record.sid && placed.assigned && !afterPlace.relayAssigned) saveSession(c, { ...afterPlace, relayAssigned: true })

  // A pairing code, and beta's first login step (code sent, or the QR login token), belong in the connect answer.
  if ((input.linkMethod === 'pairing_code' || input.ref.channel === 'beta') && placed.assigned) {
    await c.sessionSignal.until(() => {
      const latest = currentSession(c)
      return (
        !latest ||
        latest.sid !== record.sid ||
        latest.pairingCode !== null ||
        latest.qr !== null ||
        ['code_required', 'password_required', 'connected', 'disconnected', 'restricted'].includes(latest.session)
      )
    }, input.waitForCodeMs)
  }
  return { sid: record.sid, assigned: placed.assigned, view: pairingView(currentSession(c), Date.now()) }
}

/** The account's status moves with its event in one batch (events/account-status.ts); nothing is written when it does not change. */
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

/** No QR code, no pairing code, no problem: what a session shows once the phone is past them. */
const NO_CODE = { ...NO_PAIRING, problem: null, message: null } as const

/** The record after a state report (pure: the probe of the status endpoint uses it without saving). */
export function withState(record: SessionRecord, state: SessionState, at: number): SessionRecord {
  const base: SessionRecord = { ...record, lastActivityAt: Math.max(at, record.lastActivityAt ?? 0), relayAssigned: true, relayLost: false }
  switch (state.state) {
    case 'qr_pending':
      return { ...base, session: 'qr_pending', qr: state.qr, qrExpiresAt: state.expiresAt, problem: null, message: null, passkey: null }
    case 'pairing_code':
      return {
        ...base,
        session: 'pairing_code',
        qr: null,
        pairingCode: state.code,
        pairingCodeExpiresAt: state.expiresAt,
        problem: null,
        message: null,
        passkey: null,
      }
    case 'passkey_required':
    case 'passkey_code':
      return { ...base, session: state.state, ...NO_CODE, passkey: passkeyAfter(record.passkey, state) }
    case 'connecting':
      // A ceremony that moved on (assertion accepted, code confirmed) stays readable until the session connects.
      return { ...base, session: 'connecting', qr: null, problem: null, message: null }
    case 'code_required':
    case 'password_required':
      return { ...base, session: state.state, qr: null, qrExpiresAt: null, problem: null, message: null }
    case 'connected':
      return {
        ...base,
        session: 'connected',
        ...NO_PAIRING,
        problem: null,
        message: null,
        identifier: state.identifier,
        upstreamUserId: state.upstreamUserId,
        passkey: null,
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
      return { ...base, session: state.state, qr: null, pairingCode: null, problem: state.problem, message: state.message, passkey: null }
  }
}

/** A state report from the relay running the session. Answers the queued sends to hand over once it is connected. */
export async function onRelayState(c: AccountContext, ref: AccountRef, sid: string, state: SessionState, at: number): Promise<{ resend: QueuedSend[] }> {
  const record = currentSession(c)
  if (!record || record.sid !== sid) return { resend: [] }
  saveSession(c, withState(record, state, at))
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
  const record = currentSession(c)
  if (!record || record.sid !== sid || record.session !== 'connected') return
  saveSession(c, { ...record, relayLost: true })
  await moveAccount(c, ref, 'disconnected', 'relay_unavailable')
}

/**
 * The account is being removed: its relay logs the session out upstream if one is reachable, and the record and its
 * session fence are forgotten, so adding the number again starts a new session id (issue 14 §1: the old id and fence
 * left behind made every write of the new session look stale).
 */
export async function removeSession(c: AccountContext): Promise<{ reached: boolean }> {
  const record = currentSession(c)
  if (!record) return { reached: false }
  c.store.delete(SESSION_KEY)
  c.store.delete(SESSION_FENCE_KEY)
  c.sessionSignal.notify()
  try {
    return await relayHub(c.env).logoutSession(record.sid)
  } catch {
    // Removing succeeds locally even when the relay side is unreachable (spec 4.3).
    return { reached: false }
  }
}

export type SessionStatus = { record: SessionRecord | undefined; view: PairingView; live: boolean }

/** The record as last reported; with a probe timeout, the state asked live from the relay running it (`live`). */
export async function sessionStatus(c: AccountContext, probeTimeoutMs: number | null): Promise<SessionStatus> {
  const record = currentSession(c)
  const cached = { record, view: pairingView(record, Date.now()), live: false }
  if (!record || probeTimeoutMs === null) return cached
  const state = await relayHub(c.env).probeSession(record.sid, probeTimeoutMs)
  if (!state) return cached
  const probed = withState(record, state, Date.now())
  return { record: probed, view: pairingView(probed, Date.now()), live: true }
}
