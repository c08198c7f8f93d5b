/**
 * The long-poll loop over GET /v1/messages/wait as an async iterable: `for await (const m of gw.messages.stream())`
 * yields every inbound message once, oldest first, passing each answer's cursor to the next wait. `cursor` is where
 * to resume after a restart: it moves past a batch only once every message of it was taken, so a loop that stops
 * half-way through a batch gets the rest again (at least once, never skipped). A refused wait (`wait_concurrency`,
 * 503) or a lost connection is waited out and retried; other errors end the loop by throwing.
 */
import { GatewayError, MessagingError } from './errors.js'

/** After a failed wait: 1 s, doubling up to 30 s (or the server's Retry-After when it names one). */
export const STREAM_RETRY_MIN_MS = 1_000
export const STREAM_RETRY_MAX_MS = 30_000

export type StreamOptions = {
  /** Resume after this cursor (a previous stream's `cursor`); omitted: messages from now on. */
  cursor?: string
  /** Only this account's messages. */
  accountId?: string
  /** Seconds each wait stays open, 0 to 55 (default 25). */
  timeoutS?: number
  /** Stops the loop (the open wait is cancelled). */
  signal?: AbortSignal
}

export type WaitAnswer<M> = { messages: M[]; cursor: string }
export type WaitCall<M> = (query: { cursor?: string; account_id?: string; timeout_s: number }, signal?: AbortSignal) => Promise<WaitAnswer<M>>

/** Whether a failed wait is worth repeating as it is. */
function retryable(err: unknown): boolean {
  if (err instanceof MessagingError) return err.code === 'wait_concurrency' || err.status === 503 || err.status >= 500
  if (err instanceof GatewayError) return err.status >= 500 || err.status === 429
  return err instanceof TypeError // fetch's network failure
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
  })
}

export class MessageStream<M> implements AsyncIterable<M> {
  /** Where the next wait starts; save it to resume without gaps. */
  cursor: string | undefined

  constructor(
    private readonly wait: WaitCall<M>,
    private readonly opts: StreamOptions = {}
  ) {
    this.cursor = opts.cursor
  }

  async *[Symbol.asyncIterator](): AsyncIterator<M> {
    const { signal, accountId, timeoutS = 25 } = this.opts
    let failures = 0
    while (!signal?.aborted) {
      let answer: WaitAnswer<M>
      try {
        answer = await this.wait({ cursor: this.cursor, account_id: accountId, timeout_s: timeoutS }, signal)
      } catch (err) {
        if (signal?.aborted) return
        if (!retryable(err)) throw err
        failures++
        const backoff = Math.min(STREAM_RETRY_MAX_MS, STREAM_RETRY_MIN_MS * 2 ** (failures - 1))
        const told = err instanceof GatewayError && err.retryAfterS !== null ? err.retryAfterS * 1000 : 0
        await sleep(Math.max(backoff, told), signal)
        continue
      }
      failures = 0
      for (const m of answer.messages) yield m
      this.cursor = answer.cursor
    }
  }
}
