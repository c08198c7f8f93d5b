/** Guards /admin with the ADMIN_TOKEN secret (Bearer). Without the secret the admin API is off. */
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { timingSafeEqual } from '../lib/crypto'

export const adminToken = createMiddleware<AppEnv>(async function adminToken(c, next) {
  const expected = c.env.ADMIN_TOKEN
  if (!expected) throw new ApiError(503, 'admin_disabled', 'The admin API is off: set the ADMIN_TOKEN secret')
  const given = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization')?.trim() ?? '')?.[1] ?? ''
  if (!timingSafeEqual(given, expected)) throw new ApiError(401, 'unauthorized', 'A valid admin token is required (Authorization: Bearer <ADMIN_TOKEN>)')
  await next()
})
