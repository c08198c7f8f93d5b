/**
 * A beta login's link as the part-3 status values, for the status route and the hosted page alike, and the login
 * token inside a QR link.
 */
import type { BetaStatus } from '../../../schema/api/beta'
import type { LinkState } from '../../account/link/state'

export type BetaStatusView = { status: BetaStatus; reason: string | null; message: string | null }

/** beta's `tg://login?token=…` deep link carries the login token as base64url. */
export function tokenOf(qr: string): string {
  return new URL(qr).searchParams.get('token') ?? ''
}

export function statusOf(link: LinkState | null | undefined): BetaStatusView {
  if (!link) return { status: 'not_initialized', reason: null, message: null }
  if (link.relayLost && link.session !== 'disconnected' && link.session !== 'restricted')
    return {
      status: 'initializing',
      reason: 'relay_unavailable',
      message: 'The relay running this session went away and no other relay has taken it over yet.',
    }
  switch (link.session) {
    case 'starting':
      return link.relayAssigned
        ? { status: 'initializing', reason: null, message: 'The relay is starting the session.' }
        : {
            status: 'initializing',
            reason: 'relay_unavailable',
            message: 'No relay is available to run this session right now; it starts as soon as one connects.',
          }
    case 'qr_pending':
    case 'pairing_code':
    // alpha's passkey ceremony; a beta link never reports it.
    case 'passkey_required':
    case 'passkey_code':
    case 'connecting':
      return { status: 'initializing', reason: null, message: null }
    case 'code_required':
    case 'password_required':
      return { status: link.session, reason: null, message: null }
    case 'connected':
      // `flood_wait` while beta asks the account to slow down: connected, sends paused.
      return { status: 'connected', reason: link.problem, message: link.message }
    case 'disconnected':
      return { status: 'disconnected', reason: link.problem, message: link.message }
    case 'restricted':
      return { status: 'error', reason: link.problem, message: link.message }
  }
}
