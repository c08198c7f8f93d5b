/**
 * The REST API's bodies are JSON, whatever the client forgot to say: a body sent with no Content-Type, or as
 * `text/plain` (what `fetch()` sets for a string body, and what many HTTP snippets leave), is read as JSON, so a
 * correct body is never refused for its label. A body labelled as something else (a form, multipart) still answers
 * 415, and one that is not JSON answers 400 "not valid JSON". A request with no body, or one declared empty
 * (`Content-Length: 0`, which workerd still hands over as an empty stream), is left alone: a route whose body is
 * required then names the missing field, one whose body is optional takes it as none. Runs right after
 * authentication, before the key's scope check and idempotency read the body (an in-process MCP call's vouch, which
 * follows the request object, is read by then; MCP calls always say JSON anyway). /v1 only: /admin keeps 415.
 */
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../env'

const TEXT_PLAIN = /^\s*text\/plain\s*(;|$)/i

export const jsonByDefault = createMiddleware<AppEnv>(async function jsonByDefault(c, next) {
  const raw = c.req.raw
  const type = raw.headers.get('content-type')
  if (raw.body !== null && raw.headers.get('content-length') !== '0' && (type === null || TEXT_PLAIN.test(type))) {
    const headers = new Headers(raw.headers)
    headers.set('content-type', 'application/json')
    c.req.raw = new Request(raw, { headers })
  }
  await next()
})
