/**
 * alpha's chat actions (issue 25) on the open socket, as Baileys does them: a reaction is a `react` message to the
 * chat (text '' removes it), typing is `composing` presence to the chat, read marks are read receipts for the
 * person's messages (`readMessages`), and a lookup is the USync contact query (`onWhatsApp`). A refusal becomes
 * `refused` with alpha's reason; a closed socket, `not_connected`.
 */
import type { ActionOutcome, ChatAction } from '../connector'
import type { NumberLookup } from './recipients'
import { errText, recipientJid, SEND_TIMEOUT_MS, withTimeout } from './send'
import type { AlphaSocket } from './socket'
import { closeInfo } from './state'

export type AlphaActionDeps = { openSocket(): AlphaSocket | null; lookup: NumberLookup }

const NOT_CONNECTED: ActionOutcome = { ok: false, error: 'not_connected', message: 'The alpha session is not connected.', retryAfterS: null }

export async function alphaAct(deps: AlphaActionDeps, a: ChatAction): Promise<ActionOutcome> {
  const sock = deps.openSocket()
  if (!sock) return NOT_CONNECTED
  try {
    await withTimeout(run(sock, deps, a), SEND_TIMEOUT_MS, () => new Error('alpha did not answer in time'))
    if (a.kind !== 'lookup') return { ok: true }
    return { ok: true, onNetwork: (await deps.lookup.jidFor(sock, a.phone)) !== null }
  } catch (err) {
    if (closeInfo(err).statusCode === 428) return NOT_CONNECTED
    return { ok: false, error: 'refused', message: `alpha refused: ${errText(err)}`.slice(0, 1000), retryAfterS: null }
  }
}

async function run(sock: AlphaSocket, deps: AlphaActionDeps, a: ChatAction): Promise<void> {
  switch (a.kind) {
    case 'react': {
      const jid = recipientJid(a.to)
      await sock.sendMessage(jid, { react: { text: a.emoji, key: { remoteJid: jid, fromMe: a.target.fromMe, id: a.target.upstreamId } } })
      return
    }
    case 'typing':
      return sock.sendPresenceUpdate('composing', recipientJid(a.to))
    case 'read': {
      const jid = recipientJid(a.to)
      return sock.readMessages(a.upstreamIds.map((id) => ({ remoteJid: jid, fromMe: false, id })))
    }
    case 'lookup':
      // The lookup itself is made (and cached) by the caller's `jidFor`, the same one sends use.
      await deps.lookup.jidFor(sock, a.phone)
      return
  }
}
