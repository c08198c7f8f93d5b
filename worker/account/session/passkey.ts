/**
 * alpha's passkey ceremony as the AccountDO keeps it (docs/channels/alpha.md, "When the phone asks for a passkey"):
 * the request options and the code the relay reported, what the status endpoint says about them, and the one-time
 * claim that spends a ceremony's token when the owner's assertion is handed on. The assertion itself never comes
 * here: the Worker route passes it straight to the relay hub.
 */
import type { SessionState } from '../../../schema/frames'
import { parsePasskeyOptions } from '../../../schema/passkey'
import type { AccountContext } from '../context'
import { SESSION_KEY, SessionRecord, type SessionPasskey } from './state'

/** The ceremony after a passkey state report; a repeat of the same ceremony keeps its token spent. */
export function passkeyAfter(
  current: SessionPasskey | null | undefined,
  state: Extract<SessionState, { state: 'passkey_required' | 'passkey_code' }>
): SessionPasskey | null {
  if (state.state === 'passkey_required') {
    // The frame was checked to hold request options; the challenge names the ceremony.
    const ceremony = parsePasskeyOptions(state.requestOptions)?.challenge ?? ''
    if (current?.ceremony === ceremony) return { ...current, requestOptions: state.requestOptions, expiresAt: state.expiresAt }
    return { ceremony, requestOptions: state.requestOptions, expiresAt: state.expiresAt, used: false, code: null, confirm: false, codeExpiresAt: null }
  }
  if (!current) return null
  return { ...current, used: true, code: state.code, confirm: state.confirm, codeExpiresAt: state.expiresAt }
}

export type PasskeyClaim = { ok: true; sid: string } | { ok: false; error: 'not_pending' | 'used' | 'expired' }

/**
 * Spends the ceremony's token: the first assertion for `ceremony` may go on to the relay, any later one is a replay.
 * Refused when no ceremony waits (another one started, the session moved on) or when its wait is over. Runs inside the
 * AccountDO, so two assertions racing for one token cannot both pass.
 */
export function claimPasskey(c: AccountContext, ceremony: string, now: number): PasskeyClaim {
  const record = c.store.get(SESSION_KEY, SessionRecord)
  const p = record?.passkey
  if (!record || !p || p.ceremony !== ceremony) return { ok: false, error: 'not_pending' }
  if (p.used) return { ok: false, error: 'used' }
  if (record.session !== 'passkey_required') return { ok: false, error: 'not_pending' }
  if (now >= p.expiresAt) return { ok: false, error: 'expired' }
  c.store.put(SESSION_KEY, { ...record, passkey: { ...p, used: true } })
  c.sessionSignal.notify()
  return { ok: true, sid: record.sid }
}
