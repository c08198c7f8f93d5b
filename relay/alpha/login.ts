/**
 * Linking a new device, for one socket: the QR codes as they rotate, or one pairing code requested on the first QR
 * event (Baileys' documented trigger: the socket is ready by then), the link window's end, and the passkey gate.
 * The client owns the socket and decides what a close means; this only turns link events into session states.
 */
import { getBinaryNodeChild, getBinaryNodeChildren } from '@whiskeysockets/baileys'
import type { BinaryNode } from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import type { LinkMethod, SessionState } from '../connector'
import { phoneDigits } from './ids'
import type { AlphaSocket } from './socket'

/** Baileys' defaults (`qrTimeout` unset): the first QR lives 60 s, each later one 20 s. */
export const QR_FIRST_TTL_MS = 60_000
export const QR_NEXT_TTL_MS = 20_000
/** QR refs the server hands out when the `pair-device` stanza was not seen; WAHA observes 6 codes per link attempt. */
export const LINK_REFS_ASSUMED = 6

/**
 * Notification types alpha sends when the phone demands a passkey before linking (Baileys#2672, PRs #2689/#2696).
 * Baileys 7.0.0-rc14 acknowledges and drops them, after which the link just stalls; we watch the raw stanzas.
 */
export const PASSKEY_NOTIFICATION_TYPES = ['passkey_prologue_request', 'crsc_continuation'] as const

export type LinkFlow = {
  /** Each `qr` from `connection.update`. */
  onQr(qr: string): Promise<void>
  /** The phone confirmed (`isNewLogin`): a 515 restart follows, then the session opens. */
  onPaired(): void
  readonly paired: boolean
  /** Set when the phone asked for a passkey; the client then ends the socket and reports it. */
  readonly passkeyRequired: boolean
}

export type LinkDeps = {
  method: LinkMethod
  phone: string
  sock: AlphaSocket
  now(): number
  emit(state: SessionState): void
  log: Logger
  /** Called once when the passkey gate shows up. */
  onPasskey(): void
}

export function startLinkFlow(deps: LinkDeps): LinkFlow {
  let qrCount = 0
  let firstQrAt: number | null = null
  let refs = LINK_REFS_ASSUMED
  let codeRequested = false
  let paired = false
  let passkeyRequired = false

  deps.sock.ws.on('CB:iq,type:set,pair-device', (node: BinaryNode) => {
    const count = getBinaryNodeChildren(getBinaryNodeChild(node, 'pair-device'), 'ref').length
    if (count > 0) refs = count
  })
  for (const type of PASSKEY_NOTIFICATION_TYPES) {
    deps.sock.ws.on(`CB:notification,type:${type}`, () => {
      if (passkeyRequired || paired) return
      passkeyRequired = true
      deps.log.warn({ type }, 'alpha link: the phone requires a passkey')
      deps.onPasskey()
    })
  }

  /** When the whole link window closes: the first QR's life plus one shorter life per remaining ref. */
  function windowEnd(): number {
    return (firstQrAt ?? deps.now()) + QR_FIRST_TTL_MS + Math.max(0, refs - 1) * QR_NEXT_TTL_MS
  }

  return {
    async onQr(qr) {
      if (paired || passkeyRequired) return
      qrCount += 1
      const at = deps.now()
      firstQrAt ??= at
      if (deps.method === 'qr') {
        deps.emit({ state: 'qr_pending', qr, expiresAt: at + (qrCount === 1 ? QR_FIRST_TTL_MS : QR_NEXT_TTL_MS) })
        return
      }
      // Every rotation emits `qr` again and each request would mint a new code: ask once per socket.
      if (codeRequested) return
      codeRequested = true
      try {
        const code = await deps.sock.requestPairingCode(phoneDigits(deps.phone))
        deps.emit({ state: 'pairing_code', code, expiresAt: windowEnd() })
      } catch (err) {
        // The socket closed under us (Baileys throws 428); the close event decides what happens next.
        deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'alpha link: pairing code request failed')
      }
    },
    onPaired() {
      paired = true
    },
    get paired() {
      return paired
    },
    get passkeyRequired() {
      return passkeyRequired
    },
  }
}
