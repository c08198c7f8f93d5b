/**
 * Guards /admin with the ADMIN_TOKEN secret (Bearer). Without the secret, or with one shorter than
 * ADMIN_TOKEN_MIN_CHARS (guessable), the admin API is off. Wrong tokens count against the caller's address.
 */
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { timingSafeEqual } from '../lib/crypto'
import { authFailed, refuseThrottled } from './auth-throttle'

export const ADMIN_TOKEN_MIN_CHARS = 32

export const adminToken = createMiddleware<AppEnv>(async function adminToken(c, next) {
  const expected = c.env.ADMIN_TOKEN
  if (!expected) throw new ApiError(503, 'admin_disabled', 'The admin API is off: set the ADMIN_TOKEN secret')
  if (expected.length < ADMIN_TOKEN_MIN_CHARS) {
    throw new ApiError(503, 'admin_disabled', `The admin API is off: ADMIN_TOKEN must be at least ${ADMIN_TOKEN_MIN_CHARS} characters`)
  }
  refuseThrottled(c)
  const given = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization')?.trim() ?? '')?.[1] ?? ''
  if (!timingSafeEqual(given, expected))
    return authFailed(c, new ApiError(401, 'unauthorized', 'A valid admin token is required (Authorization: Bearer <ADMIN_TOKEN>)'))
  await next()
})
