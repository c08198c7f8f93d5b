/**
 * A separate media origin (MEDIA_BASE_URL, docs/security.md) serves signed media links and nothing else: a request
 * on its host for any other path is 404, so no page, API or MCP endpoint ever shares an origin with a stranger's
 * file. Without MEDIA_BASE_URL, or when it names the public host itself, this does nothing.
 */
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'

function hostOf(url: string | undefined): string | null {
  try {
    return url ? new URL(url).host : null
  } catch {
    return null
  }
}

export const mediaOriginOnly = createMiddleware<AppEnv>(async function mediaOriginOnly(c, next) {
  const media = hostOf(c.env.MEDIA_BASE_URL)
  if (media !== null && media !== hostOf(c.env.PUBLIC_BASE_URL) && new URL(c.req.url).host === media && !c.req.path.startsWith('/media/')) {
    throw new ApiError(404, 'not_found', 'This origin serves media links only')
  }
  await next()
})
