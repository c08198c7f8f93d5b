/**
 * Chat actions on relay channels (issue 25): the action goes to the relay holding the account's session as one
 * `action` frame and its answer comes back within ACTION_TIMEOUT_MS; nothing is queued (a late typing or read mark is
 * worse than none, and the caller may repeat a reaction). The driver's refusals become the route's errors.
 */
import type { ActionOutcome, ChatAction } from '../../../schema/frames'
import { relayHub } from '../../lib/objects'
import type { AccountContext, ActionResult, ChannelAction } from '../context'
import { SESSION_KEY, SessionRecord } from './state'

/** How long the edge waits for the relay's answer to an action. */
export const ACTION_TIMEOUT_MS = 15_000
/** When to try again after no relay answered. */
const RELAY_RETRY_S = 5

/** The frame's action; null when the message has no upstream id to name it by (never so for a relay channel's message on the network). */
export function toChatAction(a: ChannelAction): ChatAction | null {
  switch (a.kind) {
    case 'lookup':
      return { kind: 'lookup', phone: a.phone }
    case 'typing':
      return { kind: 'typing', to: { phone: a.contact.phone, peerId: a.contact.peerId } }
    case 'read':
      return a.target.upstreamId === null
        ? null
        : { kind: 'read', to: { phone: a.contact.phone, peerId: a.contact.peerId }, upstreamIds: [a.target.upstreamId] }
    case 'react':
      return a.target.upstreamId === null
        ? null
        : {
            kind: 'react',
            to: { phone: a.contact.phone, peerId: a.contact.peerId },
            target: { upstreamId: a.target.upstreamId, fromMe: a.target.fromMe },
            emoji: a.emoji ?? '',
          }
  }
}

export function fromActionOutcome(outcome: ActionOutcome): ActionResult {
  if (outcome.ok) return { ok: true, onNetwork: outcome.onNetwork ?? null, reason: outcome.reason ?? null }
  switch (outcome.error) {
    case 'not_connected':
      return { ok: false, status: 409, code: 'account_not_connected', message: outcome.message }
    case 'unsupported':
      return { ok: false, status: 422, code: 'unsupported_on_channel', message: outcome.message }
    case 'flood_wait':
      return { ok: false, status: 429, code: 'rate_limited', message: outcome.message, retryAfterS: outcome.retryAfterS ?? 60 }
    case 'refused':
      return { ok: false, status: 422, code: 'action_refused', message: outcome.message }
  }
}

export async function relayAct(c: AccountContext, action: ChannelAction): Promise<ActionResult> {
  const record = c.store.get(SESSION_KEY, SessionRecord)
  if (!record) return { ok: false, status: 409, code: 'account_not_connected', message: 'The account has no linked session' }
  const frame = toChatAction(action)
  if (!frame) return { ok: false, status: 422, code: 'message_not_on_network', message: 'The network gave this message no id to name it by' }
  const outcome = await relayHub(c.env).chatAction(record.sid, frame, ACTION_TIMEOUT_MS)
  if (!outcome) {
    return {
      ok: false,
      status: 503,
      code: 'relay_unavailable',
      message: 'No relay holding this account answered in time; try again shortly',
      retryAfterS: RELAY_RETRY_S,
    }
  }
  return fromActionOutcome(outcome)
}
