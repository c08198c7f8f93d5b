/**
 * Linking a new device, for one socket: the QR codes as they rotate, or one pairing code requested on the first QR
 * event (Baileys' documented trigger: the socket is ready by then), the link window's end, and the passkey gate:
 * with the tenant's passkey linking off it ends linking; with it on, the ceremony runs (passkey-flow.ts).
 * The client owns the socket and decides what a close means; this only turns link events into session states.
 */
import { buildAckStanza, getBinaryNodeChild, getBinaryNodeChildren } from '@whiskeysockets/baileys'
import type { BinaryNode } from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import type { LinkMethod, LoginOutcome, LoginStep, SessionState } from '../connector'
import { phoneDigits } from './ids'
import { makePasskeyFlow, type PasskeyCreds, type PasskeyProblem } from './passkey-flow'
import { PAIR_DEVICE_EVENT, takeOverQrRotation } from './passkey-qr'
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
  /** Passkey linking on: a ceremony is under way, so a close of this socket ends it (passkey_timeout). */
  readonly passkeyActive: boolean
  /** The owner's passkey steps, relayed by the edge. */
  submit(step: LoginStep): Promise<LoginOutcome>
  /** The socket is gone: no more QR codes, no ceremony deadlines. */
  stop(): void
}

export type LinkDeps = {
  method: LinkMethod
  phone: string
  sock: AlphaSocket
  now(): number
  emit(state: SessionState): void
  log: Logger
  /** Passkey linking off: called once when the passkey gate shows up. */
  onPasskey(): void
  /** The tenant's alpha_passkey_linking: the relay runs the ceremony instead of ending linking. */
  passkeyLinking: boolean
  /** Baileys' creds of this socket (the keys the pairing request carries; Baileys reads the new ADV secret from here). */
  creds: PasskeyCreds
  /** Passkey linking on: the ceremony failed for good; end the socket and report `problem`. */
  onPasskeyFailed(problem: PasskeyProblem, detail: string): void
}

export function startLinkFlow(deps: LinkDeps): LinkFlow {
  let qrCount = 0
  let firstQrAt: number | null = null
  let refs = LINK_REFS_ASSUMED
  let codeRequested = false
  let paired = false
  let passkeyRequired = false
  const passkey = deps.passkeyLinking
    ? makePasskeyFlow({
        query: (node, timeoutMs) => deps.sock.query(node, timeoutMs),
        creds: deps.creds,
        emit: deps.emit,
        fail: deps.onPasskeyFailed,
        now: deps.now,
        log: deps.log,
      })
    : null
  // With passkey linking the QR codes stop once the phone scanned: Baileys' own rotation would end the socket mid-ceremony.
  const qr = deps.passkeyLinking
    ? takeOverQrRotation(deps.sock, deps.creds, { firstMs: QR_FIRST_TTL_MS, nextMs: QR_NEXT_TTL_MS }, (code, total) => {
        refs = total
        void flow.onQr(code)
      })
    : null

  deps.sock.ws.on(PAIR_DEVICE_EVENT, (node: BinaryNode) => {
    const count = getBinaryNodeChildren(getBinaryNodeChild(node, 'pair-device'), 'ref').length
    if (count > 0) refs = count
  })
  for (const type of PASSKEY_NOTIFICATION_TYPES) {
    deps.sock.ws.on(`CB:notification,type:${type}`, (node: BinaryNode) => {
      if (paired) return
      if (passkey) {
        // Baileys acks every notification, but with `creds.me.id`, which a QR link has not yet: it throws and the
        // notification stays unacknowledged. whatsmeow acks each one; so does the ceremony, where Baileys cannot.
        if (!deps.sock.user?.id) void deps.sock.sendNode(buildAckStanza(node)).catch(() => undefined)
        qr?.pause()
        passkey.onNotification(node)
        return
      }
      if (passkeyRequired) return
      passkeyRequired = true
      deps.log.warn({ type }, 'alpha link: the phone requires a passkey')
      deps.onPasskey()
    })
  }

  /** When the whole link window closes: the first QR's life plus one shorter life per remaining ref. */
  function windowEnd(): number {
    return (firstQrAt ?? deps.now()) + QR_FIRST_TTL_MS + Math.max(0, refs - 1) * QR_NEXT_TTL_MS
  }

  const flow: LinkFlow = {
    async onQr(qr) {
      if (paired || passkeyRequired || passkey?.active) return
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
      qr?.stop()
      passkey?.stop()
    },
    get paired() {
      return paired
    },
    get passkeyRequired() {
      return passkeyRequired
    },
    get passkeyActive() {
      return passkey?.active ?? false
    },
    submit(step) {
      if (!passkey)
        return Promise.resolve({ status: 'refused', error: 'no_login_pending', message: 'Passkey linking is off for this account.', retryAfterS: null })
      return passkey.submit(step)
    },
    stop() {
      qr?.stop()
      passkey?.stop()
    },
  }
  return flow
}
