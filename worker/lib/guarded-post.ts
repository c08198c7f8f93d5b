/**
 * The one outbound POST to a URL a user gave us (webhook subscriptions, the custom channel's bridge): the URL is
 * checked again by the SSRF guard at send time (the policy may be stricter than when it was saved), redirects are
 * never followed, the answer must come within the timeout, and its body is never read.
 */
import { checkPublicUrl, type UrlPolicy } from '../../common/public-url'

export type GuardedPostResult =
  | { kind: 'refused'; reason: string }
  | { kind: 'timeout' }
  | { kind: 'network'; error: string }
  /** Any HTTP answer; `location` is set for a redirect. */
  | { kind: 'answered'; status: number; headers: Headers }

export async function guardedPost(
  url: string,
  policy: UrlPolicy,
  init: { headers: Record<string, string>; body: string; timeoutMs: number }
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
  // The body is never read; cancelling it frees the connection.
  await res.body?.cancel().catch(() => undefined)
  return { kind: 'answered', status: res.status, headers: res.headers }
}
