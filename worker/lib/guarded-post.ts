/**
 * The one outbound POST to a URL a user gave us (webhook subscriptions, the custom channel's bridge): the URL is
 * checked again by the SSRF guard at send time (the policy may be stricter than when it was saved), redirects are
 * never followed, the answer must come within the timeout, and its body is not read unless the caller needs it
 * (an MCP callback's verification echo), and then only up to `readBodyBytes`.
 */
import { checkPublicUrl, type UrlPolicy } from '../../common/public-url'
import { readCapped } from './read-capped'

export type GuardedPostResult =
  | { kind: 'refused'; reason: string }
  | { kind: 'timeout' }
  | { kind: 'network'; error: string }
  /** Any HTTP answer; `body` only when asked for (null when it was larger than asked). */
  | { kind: 'answered'; status: number; headers: Headers; body?: string | null }

export async function guardedPost(
  url: string,
  policy: UrlPolicy,
  init: { headers: Record<string, string>; body: string; timeoutMs: number; readBodyBytes?: number }
): Promise<GuardedPostResult> {
  const check = checkPublicUrl(url, policy)
  if (!check.ok) return { kind: 'refused', reason: check.reason }
  let res: Response
  try {
    res = await fetch(check.url, { method: 'POST', headers: init.headers, body: init.body, redirect: 'manual', signal: AbortSignal.timeout(init.timeoutMs) })
  } catch (err) {
    const name = err instanceof Error ? err.name : ''
    if (name === 'TimeoutError' || name === 'AbortError') return { kind: 'timeout' }
    return { kind: 'network', error: err instanceof Error ? err.message || err.name : String(err) }
  }
  if (init.readBodyBytes !== undefined) {
    const bytes = await readCapped(res.body, init.readBodyBytes).catch(() => null)
    return { kind: 'answered', status: res.status, headers: res.headers, body: bytes === null ? null : new TextDecoder().decode(bytes) }
  }
  // The body is not read; cancelling it frees the connection.
  await res.body?.cancel().catch(() => undefined)
  return { kind: 'answered', status: res.status, headers: res.headers }
}
