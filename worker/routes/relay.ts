/**
 * GET /relay/connect: where relays dial in. The relay token (Authorization: Bearer) is checked here, before the
 * upgrade is forwarded to the RelayHubDO, so an unauthenticated socket never reaches it. Revoked or unknown tokens
 * are refused with 401 and count towards the address's failed-authentication limit. PUT /relay/media/{sid}/{upstreamId}: a relay streams one inbound item into the media store,
 * under the same token, for a session it holds (worker/media/upload.ts).
 */
import { Hono, type Context } from 'hono'
import { knownTenantDb } from '../db/placement'
import { directory } from '../db/shards'
import { relayForToken } from '../db/relays'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { authFailed, refuseThrottled } from '../middleware/auth-throttle'
import { RELAY_ID_HEADER, RELAY_TENANT_HEADER } from '../relay/upgrade.shared'
import { relayHub } from '../lib/objects'
import { mediaConfig, publicOrigin } from '../config'
import { mediaPath } from '../media/ids'
import { storeUpload, UPLOAD_HEADERS } from '../media/upload'

export const relayRoutes = new Hono<AppEnv>()

/** The relay a token names; a wrong token counts against the caller's address like a wrong API key (auth-throttle.ts). */
async function relayOf(c: Context<AppEnv>) {
  refuseThrottled(c)
  const token = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization')?.trim() ?? '')?.[1]
  if (!token) throw new ApiError(401, 'unauthorized', 'A relay token is required (Authorization: Bearer rly_…)')
  const relay = await relayForToken(directory(c.env), token)
  if (!relay) return authFailed(c, new ApiError(401, 'unauthorized', 'The relay token is invalid or revoked'))
  return relay
}

relayRoutes.put('/media/:sid/:upstreamId', async (c) => {
  const relay = await relayOf(c)
  const fence = Number(c.req.header(UPLOAD_HEADERS.fence))
  const { sid, upstreamId } = c.req.param()
  if (!Number.isInteger(fence) || fence < 1 || sid.length > 64 || upstreamId.length > 256)
    throw new ApiError(400, 'invalid_request', `${UPLOAD_HEADERS.fence} must name the session's fence`)
  const scope = await relayHub(c.env).mediaUploadScope(relay.id, relay.tenantId, sid, fence)
  // The same answer as a frame for a session the relay does not hold: it stops the session, the upload is dropped.
  if (!scope) throw new ApiError(409, 'stale_fence', 'this relay does not hold the session under that fence')
  const result = await storeUpload(
    c.env.MEDIA,
    await knownTenantDb(c.env, scope.tenantId),
    scope,
    upstreamId,
    c.req.raw,
    mediaConfig(c.env).maxBytes,
    Date.now()
  )
  return c.json({ ...result, url: `${publicOrigin(c.env, c.req.url)}${mediaPath(result.media_id)}` }, 200)
})

relayRoutes.get('/connect', async (c) => {
  const relay = await relayOf(c)
  if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') throw new ApiError(426, 'upgrade_required', 'Connect with a WebSocket upgrade')
  // Headers the hub trusts are set here, replacing anything the client sent under the same names.
  const headers = new Headers(c.req.raw.headers)
  headers.set(RELAY_ID_HEADER, relay.id)
  headers.set(RELAY_TENANT_HEADER, relay.tenantId ?? '')
  headers.delete('authorization')
  return relayHub(c.env).fetch(new Request(c.req.raw.url, { method: 'GET', headers }))
})
