/**
 * The alpha web client version a socket announces. Baileys 7.0.0-rc14 hard-codes one; when the network retires it,
 * every connect ends in `<failure reason="405">`. The current one is fetched with the library's own helper
 * (`fetchLatestWaWebVersion`, which reads web.whatsapp.com/sw.js) in the background: a socket never waits for it and
 * uses Baileys' built-in version until an answer is in.
 */
import { fetchLatestWaWebVersion } from '@whiskeysockets/baileys'
import type { WAVersion } from '@whiskeysockets/baileys'
import type { Logger } from 'pino'

/** One fetch may take this long; after that the built-in version stays in use. */
export const VERSION_FETCH_TIMEOUT_MS = 10_000
/**
 * A refresh within this long of the last successful one is skipped: many sessions hit 405 at once when a version is
 * retired, and one answer serves them all. A failed fetch is tried again at the next refresh.
 */
export const VERSION_REFRESH_MIN_MS = 60_000

export type FetchVersion = () => Promise<{ version: WAVersion; isLatest: boolean }>

export const fetchCurrentVersion: FetchVersion = () => fetchLatestWaWebVersion({ signal: AbortSignal.timeout(VERSION_FETCH_TIMEOUT_MS) })

export type VersionSource = {
  /** The fetched version, or null while none could be fetched (Baileys' built-in one is used). */
  current(): WAVersion | null
  /** Starts a fetch unless one is running or ran recently; resolves when it is done, never rejects. */
  refresh(): Promise<void>
}

export function makeVersionSource(fetch: FetchVersion, now: () => number, log: Logger): VersionSource {
  let current: WAVersion | null = null
  let inflight: Promise<void> | null = null
  let fetchedAt: number | null = null

  return {
    current: () => current,
    refresh() {
      if (inflight) return inflight
      if (fetchedAt !== null && now() - fetchedAt < VERSION_REFRESH_MIN_MS) return Promise.resolve()
      inflight = fetch()
        .then((got) => {
          if (!got.isLatest) return log.warn('alpha: the current web client version could not be fetched; using the built-in one')
          if (current?.join('.') !== got.version.join('.')) log.info({ version: got.version.join('.') }, 'alpha: web client version')
          current = got.version
          fetchedAt = now()
        })
        .catch(() => log.warn('alpha: fetching the web client version failed; using the built-in one'))
        .finally(() => {
          inflight = null
        })
      return inflight
    },
  }
}
