/**
 * Baileys' QR rotation, taken over on a linking socket of a tenant with passkey linking on. Baileys' own
 * (`Socket/socket.js`, `CB:iq,type:set,pair-device`) keeps rotating refs after the phone scanned one and ends the
 * socket with 408 "QR refs attempts ended" when they run out: about 160 s, while a passkey ceremony can take the owner
 * ten minutes. This one does what Baileys' does (answers the IQ, the same QR payload from the same creds, 60 s for
 * the first code and 20 s for each next, the same 408 at the end) and stops rotating once a ceremony starts.
 */
import { buildPairingQRData, getBinaryNodeChild, getBinaryNodeChildren, S_WHATSAPP_NET } from '@whiskeysockets/baileys'
import type { BinaryNode } from '@whiskeysockets/baileys'
import { ALPHA_BROWSER, type AlphaSocket } from './socket'

export const PAIR_DEVICE_EVENT = 'CB:iq,type:set,pair-device'

/** The part of Baileys' creds a QR code carries. */
export type QrCreds = { noiseKey: { public: Uint8Array }; signedIdentityKey: { public: Uint8Array }; advSecretKey: string }

export type QrRotation = {
  /** The phone scanned and a ceremony runs: no further code, no 408. */
  pause(): void
  /** The socket is gone. */
  stop(): void
}

/** A Boom-shaped error as Baileys ends the socket with when the refs run out (DisconnectReason.timedOut). */
function refsEnded(): Error {
  return Object.assign(new Error('QR refs attempts ended'), { output: { statusCode: 408 } })
}

export function takeOverQrRotation(
  sock: AlphaSocket,
  creds: QrCreds,
  timing: { firstMs: number; nextMs: number },
  onQr: (qr: string, refs: number) => void
): QrRotation {
  let timer: ReturnType<typeof setTimeout> | null = null
  let halted = false
  const halt = () => {
    halted = true
    if (timer) clearTimeout(timer)
    timer = null
  }
  sock.ws.removeAllListeners(PAIR_DEVICE_EVENT)
  sock.ws.on(PAIR_DEVICE_EVENT, (node: BinaryNode) => {
    void (async () => {
      await sock.sendNode({ tag: 'iq', attrs: { to: S_WHATSAPP_NET, type: 'result', id: node.attrs.id ?? '' } })
      const refs = getBinaryNodeChildren(getBinaryNodeChild(node, 'pair-device'), 'ref').slice()
      const total = refs.length
      const noise = Buffer.from(creds.noiseKey.public).toString('base64')
      const identity = Buffer.from(creds.signedIdentityKey.public).toString('base64')
      // Read once, as Baileys does: the codes of this socket carry the ADV secret the phone will scan.
      const adv = creds.advSecretKey
      let lifeMs = timing.firstMs
      const next = () => {
        if (halted) return
        const ref = refs.shift()
        if (!ref) return void Promise.resolve(sock.end(refsEnded())).catch(() => undefined)
        const content = ref.content
        const refText = content instanceof Uint8Array ? Buffer.from(content).toString('utf8') : String(content ?? '')
        onQr(buildPairingQRData(refText, noise, identity, adv, ALPHA_BROWSER), total)
        timer = setTimeout(next, lifeMs)
        lifeMs = timing.nextMs
      }
      next()
    })().catch(() => undefined)
  })
  return { pause: halt, stop: halt }
}
