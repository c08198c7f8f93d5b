/**
 * Honest health for an alpha session: a socket that never opens is abandoned, an open socket that stops receiving
 * frames is abandoned, and an outage that outlasts the reconnects is reported as `unresponsive` rather than left
 * looking like `connecting` (or worse, `connected`) forever. The client decides what abandoning means.
 */
import type { AlphaSocket } from './socket'

/** A resumed session that has not opened by then is abandoned and retried (Baileys: 20 s handshake, 60 s queries). */
export const CONNECT_DEADLINE_MS = 60_000
/** Down for this long while reconnecting: reported as `unresponsive` (the relay keeps retrying). */
export const UNRESPONSIVE_AFTER_MS = 90_000
/** An open socket with no frame for this long is dead even if Baileys' keep-alive (30 s pings) did not notice. */
export const LIVENESS_TIMEOUT_MS = 100_000
export const LIVENESS_CHECK_MS = 10_000

type Timer = ReturnType<typeof setTimeout>

/** Calls `onDead` if the socket has not opened within the deadline; returns the cancel. */
export function watchOpening(isOpen: () => boolean, onDead: (reason: string) => void): () => void {
  const timer = setTimeout(() => !isOpen() && onDead('connect deadline passed'), CONNECT_DEADLINE_MS)
  return () => clearTimeout(timer)
}

/** Tracks the frames of an open socket and calls `onDead` once none came for the liveness timeout. */
export function watchFrames(sock: AlphaSocket, now: () => number, onDead: (reason: string) => void): () => void {
  let lastFrameAt = now()
  let active = true
  sock.ws.on('frame', () => {
    lastFrameAt = now()
  })
  const timer = setInterval(() => {
    if (active && now() - lastFrameAt > LIVENESS_TIMEOUT_MS) {
      active = false
      onDead('liveness timeout')
    }
  }, LIVENESS_CHECK_MS)
  return () => {
    active = false
    clearInterval(timer)
  }
}

/** The outage clock: armed when the session goes down, cleared when it opens; fires `onReport` once in between. */
export function makeOutageClock(onReport: () => void) {
  let timer: Timer | null = null
  let reported = false
  return {
    /** Counts from the first call of an outage, not from the latest retry. */
    arm() {
      timer ??= setTimeout(() => {
        reported = true
        onReport()
      }, UNRESPONSIVE_AFTER_MS)
    },
    clear() {
      if (timer) clearTimeout(timer)
      timer = null
      reported = false
    },
    get reported() {
      return reported
    },
  }
}
