/**
 * The state of an alpha/beta account's link, kept in its AccountDO: the session id, the options of the connect
 * call, and the session as the relay last reported it (QR, pairing code, problem). `linkView` turns it into what
 * the status and QR endpoints show (spec 4.3 pairing status).
 */
import { z } from 'zod'
import { SessionProblem } from '../../../schema/frames'
import { passkeyReason } from './passkey-view'

export const LinkOptions = z.object({
  importContacts: z.boolean(),
  pauseAiForImportedContacts: z.boolean(),
  importExistingChats: z.boolean(),
  markImportedContactsAsPrivate: z.boolean(),
})
export type LinkOptions = z.infer<typeof LinkOptions>

/**
 * alpha's passkey ceremony while it runs (docs/channels/alpha.md, "When the phone asks for a passkey"). The owner's
 * assertion is never part of it: only that one was handed on (`used`, which spends the ceremony's token).
 */
export const LinkPasskey = z.object({
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
export type LinkPasskey = z.infer<typeof LinkPasskey>

export const LinkState = z.object({
  sid: z.string(),
  phone: z.string(),
  /** alpha: qr or pairing_code; beta: code or qr. */
  linkMethod: z.enum(['qr', 'pairing_code', 'code']),
  options: LinkOptions,
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
  /** The account's own id upstream once connected (beta: `telegram_user_id`); absent in links stored before it. */
  upstreamUserId: z.string().nullable().optional(),
  startedAt: z.number(),
  lastActivityAt: z.number().nullable(),
  /** A relay took the session (false while none is available). */
  relayAssigned: z.boolean(),
  /** The session lost its relay and no other took it within the grace period. */
  relayLost: z.boolean(),
  contactsImported: z.boolean(),
  /** alpha: the passkey ceremony in progress (absent in links stored before it). */
  passkey: LinkPasskey.nullable().optional(),
})
export type LinkState = z.infer<typeof LinkState>

export const LINK_KEY = 'link'
export const SESSION_FENCE_KEY = 'session_fence'

/** Pairing status values of spec 4.3. */
export type PairingStatus = 'not_initialized' | 'qr_pending' | 'connecting' | 'connected' | 'open' | 'disconnected'

export type LinkView = {
  status: PairingStatus
  qr: string | null
  qrExpiresAt: number | null
  pairingCode: string | null
  pairingCodeExpiresAt: number | null
  /** Why the link is not (yet) connected; a stable code (logged_out, passkey_required, relay_unavailable, …). */
  reason: string | null
  message: string | null
}

const NO_RELAY = 'No relay is available to run this session right now; it starts as soon as one connects.'
const RELAY_LOST = 'The relay running this session went away and no other relay has taken it over yet.'

export function linkView(link: LinkState | undefined, now: number): LinkView {
  const none = { qr: null, qrExpiresAt: null, pairingCode: null, pairingCodeExpiresAt: null }
  if (!link) return { status: 'not_initialized', ...none, reason: null, message: null }
  // A lapsed QR or code is not shown: scanning it would fail. The relay rotates it before that in the normal case.
  const qrLive = link.qr !== null && (link.qrExpiresAt === null || link.qrExpiresAt > now)
  const codeLive = link.pairingCode !== null && (link.pairingCodeExpiresAt === null || link.pairingCodeExpiresAt > now)
  const qr = qrLive ? { qr: link.qr, qrExpiresAt: link.qrExpiresAt } : { qr: null, qrExpiresAt: null }
  const code = codeLive ? { pairingCode: link.pairingCode, pairingCodeExpiresAt: link.pairingCodeExpiresAt } : { pairingCode: null, pairingCodeExpiresAt: null }
  if (link.relayLost && link.session !== 'disconnected' && link.session !== 'restricted') {
    return { status: 'connecting', ...none, reason: 'relay_unavailable', message: RELAY_LOST }
  }
  switch (link.session) {
    case 'starting':
      return link.relayAssigned
        ? { status: 'qr_pending', ...none, reason: null, message: 'The relay is starting the session; the QR code follows in a moment.' }
        : { status: 'qr_pending', ...none, reason: 'relay_unavailable', message: NO_RELAY }
    case 'qr_pending':
    case 'pairing_code':
      return { status: 'qr_pending', ...qr, ...code, reason: null, message: null }
    case 'passkey_required':
    case 'passkey_code':
      return { status: 'connecting', ...none, ...passkeyReason(link) }
    case 'connecting':
      return { status: 'connecting', ...none, ...(link.passkey ? passkeyReason(link) : { reason: null, message: null }) }
    // beta's login steps; worker/channels/beta reads them from the link itself.
    case 'code_required':
    case 'password_required':
      return { status: 'connecting', ...none, reason: null, message: null }
    case 'connected':
      return { status: 'connected', ...none, reason: null, message: null }
    case 'disconnected':
    case 'restricted':
      return { status: 'disconnected', ...none, reason: link.problem, message: link.message }
  }
}

/** In-memory wakeups for callers waiting on a link change (the pairing-code wait of the connect call). */
export class LinkSignal {
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
