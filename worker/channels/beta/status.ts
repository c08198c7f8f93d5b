/**
 * A beta login's session record as the part-3 status values, for the status route and the hosted page alike, and
 * the login token inside a QR link.
 */
import type { BetaStatus } from '../../../schema/api/beta'
import type { SessionRecord } from '../../account/session/state'

export type BetaStatusView = { status: BetaStatus; reason: string | null; message: string | null }

/** beta's `tg://login?token=…` deep link carries the login token as base64url. */
export function tokenOf(qr: string): string {
  return new URL(qr).searchParams.get('token') ?? ''
}

export function statusOf(record: SessionRecord | null | undefined): BetaStatusView {
  if (!record) return { status: 'not_initialized', reason: null, message: null }
  if (record.relayLost && record.session !== 'disconnected' && record.session !== 'restricted')
    return {
      status: 'initializing',
      reason: 'relay_unavailable',
      message: 'The relay running this session went away and no other relay has taken it over yet.',
    }
  switch (record.session) {
    case 'starting':
      return record.relayAssigned
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
      return { status: record.session, reason: null, message: null }
    case 'connected':
      // `flood_wait` while beta asks the account to slow down: connected, sends paused.
      return { status: 'connected', reason: record.problem, message: record.message }
    case 'disconnected':
      return { status: 'disconnected', reason: record.problem, message: record.message }
    case 'restricted':
      return { status: 'error', reason: record.problem, message: record.message }
  }
}
