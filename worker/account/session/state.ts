/**
 * The record of an alpha/beta account's session, kept in its AccountDO: the session id (`sid`), the options of the
 * connect call, and the session as the relay running it last reported it (QR, pairing code, problem). `pairingView`
 * turns it into what the status and QR endpoints show (spec 4.3 pairing status).
 */
import { z } from 'zod'
import { SessionProblem } from '../../../schema/frames'
import { passkeyReason } from './passkey-view'
import { NO_PAIRING, NO_SESSION_VIEW } from './pairing.shared'

export const SessionOptions = z.object({
  importContacts: z.boolean(),
  pauseAiForImportedContacts: z.boolean(),
  importExistingChats: z.boolean(),
  markImportedContactsAsPrivate: z.boolean(),
})
export type SessionOptions = z.infer<typeof SessionOptions>

/**
 * alpha's passkey ceremony while it runs (docs/channels/alpha.md, "When the phone asks for a passkey"). The owner's
 * assertion is never part of it: only that one was handed on (`used`, which spends the ceremony's token).
 */
export const SessionPasskey = z.object({
  /** The request options' challenge: it names the ceremony, so a token of an earlier one is worthless for this one. */
  ceremony: z.string(),
  /** As alpha sent them (JSON text; schema/passkey.ts parses them). */
  requestOptions: z.string(),
  /** When the relay stops waiting for the assertion. */
  expiresAt: z.number(),
  used: z.boolean(),
  /** The short code to compare with the phone, once alpha's continuation came. */
  code: z.string().nullable(),
  /** The owner must say the codes match before the relay goes on. */
  confirm: z.boolean(),
  codeExpiresAt: z.number().nullable(),
})
export type SessionPasskey = z.infer<typeof SessionPasskey>

export const SessionRecord = z.object({
  sid: z.string(),
  phone: z.string(),
  /** alpha: qr or pairing_code; beta: code or qr. */
  linkMethod: z.enum(['qr', 'pairing_code', 'code']),
  options: SessionOptions,
  /** `starting`: asked for, no relay has reported on it yet. The rest mirror the relay's SessionState. */
  session: z.enum([
    'starting',
    'qr_pending',
    'pairing_code',
    'code_required',
    'password_required',
    'passkey_required',
    'passkey_code',
    'connecting',
    'connected',
    'disconnected',
    'restricted',
  ]),
  qr: z.string().nullable(),
  qrExpiresAt: z.number().nullable(),
  pairingCode: z.string().nullable(),
  pairingCodeExpiresAt: z.number().nullable(),
  problem: SessionProblem.nullable(),
  message: z.string().nullable(),
  identifier: z.string().nullable(),
  /** The account's own id upstream once connected (beta: `telegram_user_id`); absent in records stored before it. */
  upstreamUserId: z.string().nullable().optional(),
  startedAt: z.number(),
  lastActivityAt: z.number().nullable(),
  /** A relay took the session (false while none is available). */
  relayAssigned: z.boolean(),
  /** The session lost its relay and no other took it within the grace period. */
  relayLost: z.boolean(),
  contactsImported: z.boolean(),
  /** alpha: the passkey ceremony in progress (absent in records stored before it). */
  passkey: SessionPasskey.nullable().optional(),
})
export type SessionRecord = z.infer<typeof SessionRecord>

/** Storage key of the record (named `link` when this was the account's "link"; stored records keep it). */
export const SESSION_KEY = 'link'
export const SESSION_FENCE_KEY = 'session_fence'

/** Pairing status values of spec 4.3. */
export type PairingStatus = 'not_initialized' | 'qr_pending' | 'connecting' | 'connected' | 'open' | 'disconnected'

export type PairingView = {
  status: PairingStatus
  qr: string | null
  qrExpiresAt: number | null
  pairingCode: string | null
  pairingCodeExpiresAt: number | null
  /** Why the session is not (yet) connected; a stable code (logged_out, passkey_required, relay_unavailable, …). */
  reason: string | null
  message: string | null
}

const NO_RELAY = 'No relay is available to run this session right now; it starts as soon as one connects.'
const RELAY_LOST = 'The relay running this session went away and no other relay has taken it over yet.'

export function pairingView(record: SessionRecord | undefined, now: number): PairingView {
  if (!record) return NO_SESSION_VIEW
  // A lapsed QR or code is not shown: scanning it would fail. The relay rotates it before that in the normal case.
  const qrLive = record.qr !== null && (record.qrExpiresAt === null || record.qrExpiresAt > now)
  const codeLive = record.pairingCode !== null && (record.pairingCodeExpiresAt === null || record.pairingCodeExpiresAt > now)
  const qr = qrLive ? { qr: record.qr, qrExpiresAt: record.qrExpiresAt } : { qr: null, qrExpiresAt: null }
  const code = codeLive
    ? { pairingCode: record.pairingCode, pairingCodeExpiresAt: record.pairingCodeExpiresAt }
    : { pairingCode: null, pairingCodeExpiresAt: null }
  if (record.relayLost && record.session !== 'disconnected' && record.session !== 'restricted') {
    return { status: 'connecting', ...NO_PAIRING, reason: 'relay_unavailable', message: RELAY_LOST }
  }
  switch (record.session) {
    case 'starting':
      return record.relayAssigned
        ? { status: 'qr_pending', ...NO_PAIRING, reason: null, message: 'The relay is starting the session; the QR code follows in a moment.' }
        : { status: 'qr_pending', ...NO_PAIRING, reason: 'relay_unavailable', message: NO_RELAY }
    case 'qr_pending':
    case 'pairing_code':
      return { status: 'qr_pending', ...qr, ...code, reason: null, message: null }
    case 'passkey_required':
    case 'passkey_code':
      return { status: 'connecting', ...NO_PAIRING, ...passkeyReason(record) }
    case 'connecting':
      return { status: 'connecting', ...NO_PAIRING, ...(record.passkey ? passkeyReason(record) : { reason: null, message: null }) }
    // beta's login steps; worker/channels/beta reads them from the record itself.
    case 'code_required':
    case 'password_required':
      return { status: 'connecting', ...NO_PAIRING, reason: null, message: null }
    case 'connected':
      return { status: 'connected', ...NO_PAIRING, reason: null, message: null }
    case 'disconnected':
    case 'restricted':
      return { status: 'disconnected', ...NO_PAIRING, reason: record.problem, message: record.message }
  }
}

/** In-memory wakeups for callers waiting on a change of the record (the pairing-code wait of the connect call). */
export class SessionSignal {
  private readonly waiters = new Set<() => void>()

  notify(): void {
    for (const w of [...this.waiters]) w()
  }

  /** Resolves when `ready()` holds (checked at once and after every change) or after `timeoutMs`. */
  until(ready: () => boolean, timeoutMs: number): Promise<boolean> {
    if (ready()) return Promise.resolve(true)
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer)
        this.waiters.delete(check)
        resolve(ok)
      }
      const check = () => {
        if (ready()) done(true)
      }
      const timer = setTimeout(() => done(false), timeoutMs)
      this.waiters.add(check)
    })
  }
}
