/**
 * The REST API's bodies are JSON, whatever the client forgot to say: a body sent with no Content-Type, or as
 * `text/plain` (what `fetch()` sets for a string body, and what many HTTP snippets leave), is read as JSON, so a
 * correct body is never refused for its label. A body labelled as something else (a form, multipart) still answers
 * 415, and one that is not JSON answers 400 "not valid JSON". Requests without a body are left alone (the routes
 * whose body is optional take that as none). Runs after authentication, so an in-process MCP call's vouch, which
 * follows the request object, is already read; MCP calls always say JSON anyway.
 */
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../env'

const TEXT_PLAIN = /^\s*text\/plain\s*(;|$)/i

export const jsonByDefault = createMiddleware<AppEnv>(async function jsonByDefault(c, next) {
  const raw = c.req.raw
  const type = raw.headers.get('content-type')
  if (raw.body !== null && (type === null || TEXT_PLAIN.test(type))) {
    const headers = new Headers(raw.headers)
    headers.set('content-type', 'application/json')
    c.req.raw = new Request(raw, { headers })
  }
  await next()
})
