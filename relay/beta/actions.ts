/**
 * beta's chat actions (issue 25) through GramJS, as beta's API has them: a reaction is messages.SendReaction (an empty
 * list removes ours), typing is messages.SetTyping with the typing action, read marks are messages.ReadHistory up to
 * the newest of the given messages, and a lookup answers from the synced address book only: importing a stranger's
 * number to test it (contacts.ImportContacts) is what gets beta accounts flagged, so a number outside the book is
 * `onNetwork: null` with the reason. A flood wait is `flood_wait` with beta's seconds.
 */
import { Api } from 'telegram'
import type { ActionOutcome, ChatAction } from '../connector'
import { decodePeerId, inputPeer, isE164, type PeerRef } from './ids'
import type { PeerDirectory } from './peers'
import type { BetaClient } from './socket'
import { classifyError } from './state'

export type BetaActionDeps = {
  client(): BetaClient | null
  peers: PeerDirectory
  /** Whether the address book has loaded (waiting a bounded while for it). */
  bookLoaded(): Promise<boolean>
  /** beta asked the account to wait: reported as a ban-risk signal. */
  onFlood(seconds: number): void
}

export const LOOKUP_OUTSIDE_BOOK =
  'beta answers only for numbers in the account’s address book; importing a stranger’s number to test it is how beta flags accounts, so the gateway never does'

function peerOf(to: { phone: string | null; peerId: string | null }, peers: PeerDirectory): PeerRef | null {
  return decodePeerId(to.peerId) ?? (to.phone && isE164(to.phone) ? peers.byPhone(to.phone) : null)
}

export async function betaAct(deps: BetaActionDeps, a: ChatAction): Promise<ActionOutcome> {
  if (a.kind === 'lookup') {
    const phone = a.phone.startsWith('+') ? a.phone : `+${a.phone}`
    if (deps.peers.byPhone(phone)) return { ok: true, onNetwork: true }
    if (!(await deps.bookLoaded())) return { ok: false, error: 'not_connected', message: 'The address book has not loaded yet; try again.', retryAfterS: null }
    return deps.peers.byPhone(phone) ? { ok: true, onNetwork: true } : { ok: true, onNetwork: null, reason: LOOKUP_OUTSIDE_BOOK }
  }
  const client = deps.client()
  if (!client) return { ok: false, error: 'not_connected', message: 'The beta session is not connected.', retryAfterS: null }
  const ref = peerOf(a.to, deps.peers)
  if (!ref) return { ok: false, error: 'refused', message: 'beta knows this person by neither id nor address book.', retryAfterS: null }
  const peer = inputPeer(ref)
  try {
    await client.invoke(request(a, peer))
    return { ok: true }
  } catch (err) {
    const v = classifyError(err)
    if (v.kind === 'flood') {
      deps.onFlood(v.seconds)
      return { ok: false, error: 'flood_wait', message: `beta asked to wait ${v.seconds} s`, retryAfterS: v.seconds }
    }
    const why = 'message' in v ? v.message : v.kind
    if (v.kind === 'transient' || v.kind === 'logged_out') return { ok: false, error: 'not_connected', message: `beta: ${why}`, retryAfterS: null }
    return { ok: false, error: 'refused', message: `beta refused: ${why}`, retryAfterS: null }
  }
}

function request(a: Exclude<ChatAction, { kind: 'lookup' }>, peer: Api.InputPeerUser): Api.AnyRequest {
  switch (a.kind) {
    case 'react':
      return new Api.messages.SendReaction({
        peer,
        msgId: Number(a.target.upstreamId),
        reaction: a.emoji === '' ? [] : [new Api.ReactionEmoji({ emoticon: a.emoji })],
      })
    case 'typing':
      return new Api.messages.SetTyping({ peer, action: new Api.SendMessageTypingAction() })
    case 'read':
      return new Api.messages.ReadHistory({ peer, maxId: Math.max(...a.upstreamIds.map(Number)) })
  }
}
