/**
 * Linking a new device on the simulated network: a QR code per ref (rotating until the refs run out), or with a
 * pairing code requested once on the first QR event (as the real upstream requires), the restart after pairing,
 * and the passkey demand of newer accounts, reported once instead of cycling codes.
 */
import type { ServerMsg } from './network/protocol'
import type { SimSession } from './session'
import { digits } from './ids'
import { PROBLEM_MESSAGES } from './state'

export function onQr(s: SimSession, msg: Extract<ServerMsg, { t: 'qr' }>): void {
  if (s.opts.linkMethod === 'pairing_code') {
    // Every ref rotation emits a QR event again; each request would mint a new code, so ask once only.
    if (!s.pairing.requested) {
      s.pairing.requested = true
      s.transmit({ t: 'pairing_code' })
    }
    return
  }
  s.emit({ state: 'qr_pending', qr: `2@${msg.ref},${digits(s.opts.phone)},sim`, expiresAt: msg.expiresAt })
}

export function onPairingCode(s: SimSession, msg: Extract<ServerMsg, { t: 'pairing_code' }>): void {
  s.emit({ state: 'pairing_code', code: msg.code, expiresAt: msg.expiresAt })
}

export async function onPaired(s: SimSession, msg: Extract<ServerMsg, { t: 'paired' }>): Promise<void> {
  // Reported before the write settles: the restart that follows pairing may be connected by then.
  s.emit({ state: 'connecting' })
  await s.saveCreds(msg.device)
}

export function onPasskeyRequired(s: SimSession): void {
  s.emit({ state: 'disconnected', problem: 'passkey_required', message: PROBLEM_MESSAGES.passkey_required })
  s.giveUp()
}
