/**
 * What the alpha and beta driver harnesses share: the fake clock they run on, letting queued event handling finish,
 * and a pino log kept as lines so tests can read what a driver wrote.
 */
import { Writable } from 'node:stream'
import pino from 'pino'
import { vi } from 'vitest'

/** Fakes timers and Date (not setImmediate, which `settleRounds` needs), starting at a fixed instant. */
export function useFakeClock() {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] })
  vi.setSystemTime(new Date('2026-09-01T10:00:00Z'))
}

/** Lets `rounds` turns of queued handlers and next-tick emits run. */
export async function settleRounds(rounds: number) {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r))
}

/** A pino logger at `level` whose every line is kept in `logLines`. */
export function capturedLog(level: pino.LevelWithSilent) {
  const logLines: string[] = []
  const log = pino(
    { level },
    new Writable({
      write(chunk, _enc, done) {
        logLines.push(String(chunk))
        done()
      },
    })
  )
  return { log, logLines }
}
