/**
 * REST operations whose channel is not built yet (SMS 4.5, page inbox 4.6). Each answers 501 `not_implemented` in its path family's error shape, so the MCP tools that map
 * to them already answer. Mounted after the real sub-apps: a real route registered earlier wins, and the entry
 * here is deleted when its issue lands.
 */
import { Hono } from 'hono'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'

const SMS = 'The SMS channel'
const PAGE_INBOX = 'The page-inbox channel'

/** Method, Hono path (relative to /v1) and what is missing, in the order of the spec. */
export const NOT_IMPLEMENTED: readonly (readonly [Method, string, string])[] = [
  ['POST', '/channels/sms/twilio', SMS],
  ['POST', '/channels/sms/android-gateway', SMS],
  ['GET', '/channels/sms', SMS],
  ['GET', '/channels/sms/android-gateway', SMS],
  ['DELETE', '/channels/sms', SMS],
  ['PUT', '/channels/meta/app', PAGE_INBOX],
  ['POST', '/channels/meta/connect', PAGE_INBOX],
  ['GET', '/channels/meta/status', PAGE_INBOX],
  ['GET', '/channels/meta/pages', PAGE_INBOX],
  ['POST', '/channels/meta/pages/select', PAGE_INBOX],
  ['DELETE', '/channels/meta', PAGE_INBOX],
]

export const notImplementedRoutes = new Hono<AppEnv>()

for (const [method, path, what] of NOT_IMPLEMENTED) {
  notImplementedRoutes.on(method, path, () => {
    throw new ApiError(501, 'not_implemented', `${what} is not available yet`)
  })
}
