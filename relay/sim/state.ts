/**
 * How the simulated network's close codes map to session states: named problems with one human sentence each
 * (mautrix style), and which closes are worth a reconnect.
 */
import type { AlphaProblem } from '../connector'
import { SIM_CLOSE } from './network/protocol'

export const PROBLEM_MESSAGES: Record<AlphaProblem, string> = {
  logged_out: 'The linked device was removed on the phone (or logged out); link the number again.',
  blocked_by_alpha: 'alpha restricted or banned this number.',
  replaced: 'Another session with the same credentials took over; this one stopped so the two do not fight.',
  passkey_required: 'The phone asks for a passkey to link a new device, which a QR code or pairing code alone cannot complete.',
  // The simulator plays the passkey demand as a tenant with alpha_passkey_linking off sees it; the ceremony itself is
  // played against the alpha driver (test/fixtures/alpha-passkey-primary.ts).
  passkey_expired: 'The owner did not answer the passkey ceremony in time; start linking again.',
  passkey_rejected: 'The network refused a step of the passkey ceremony; start linking again.',
  passkey_timeout: 'The network did not answer a step of the passkey ceremony in time; start linking again.',
  link_expired: 'The QR code or pairing code was not used in time; start linking again.',
  session_unreadable: 'The stored session was written with another RELAY_SESSION_KEY; link again with force_new.',
  unresponsive: 'The network stopped answering; the relay keeps trying to reconnect.',
  client_outdated: 'The network refused this client version; the relay operator must upgrade it.',
}

export type CloseOutcome =
  | { kind: 'terminal'; state: 'disconnected' | 'restricted'; problem: AlphaProblem; wipe: boolean }
  | { kind: 'link_expired' }
  | { kind: 'restart' }
  | { kind: 'reconnect' }

export function closeOutcome(code: number, hasCreds: boolean): CloseOutcome {
  switch (code) {
    case SIM_CLOSE.LOGGED_OUT:
      return { kind: 'terminal', state: 'disconnected', problem: 'logged_out', wipe: true }
    case SIM_CLOSE.BANNED:
      return { kind: 'terminal', state: 'restricted', problem: 'blocked_by_alpha', wipe: false }
    case SIM_CLOSE.REPLACED:
      return { kind: 'terminal', state: 'disconnected', problem: 'replaced', wipe: false }
    case SIM_CLOSE.RESTART_REQUIRED:
      return { kind: 'restart' }
    case SIM_CLOSE.LINK_WINDOW_OVER:
      return hasCreds ? { kind: 'reconnect' } : { kind: 'link_expired' }
    default:
      return { kind: 'reconnect' }
  }
}
