/**
 * GET /media/{mediaId}?tenant=…&expires=…&signature=…: a signed media link, served without an API key
 * (worker/media/links.ts); the tenant names the shard that holds the item.
 * A wrong or altered signature is 403, an expired link 410 (get a fresh one from GET /v1/media/{id}/link), an item no
 * longer kept 404. The clock is injectable for tests of expiry.
 */
import { Hono } from 'hono'
import type { AppEnv } from '../env'
import { encryptionKey } from '../config'
import { getMedia, type MediaRow } from '../db/media'
import { tenantDb } from '../db/placement'
import { shardCount, shardDb } from '../db/shards'
import { ApiError } from '../errors'
import { checkMediaLink } from '../media/links'
import { serveMedia } from '../media/serve'

/** The item a link names: on the tenant's shard, or, for a link signed before shards (no tenant), on whichever holds it. */
async function linkedMedia(env: Env, mediaId: string, tenantId: string | undefined): Promise<MediaRow | undefined> {
  if (tenantId !== undefined) {
    const db = await tenantDb(env, tenantId)
    const row = db && (await getMedia(db, mediaId))
    return row?.tenantId === tenantId ? row : undefined
  }
  for (let shard = 0; shard < shardCount(env); shard++) {
    const row = await getMedia(shardDb(env, shard), mediaId)
    if (row) return row
  }
  return undefined
}

export function mediaLinkRoutes(now: () => number = Date.now) {
  const routes = new Hono<AppEnv>()
  routes.on(['GET', 'HEAD'], '/:mediaId', async (c) => {
    const mediaId = c.req.param('mediaId')
    const q = { tenant: c.req.query('tenant'), expires: c.req.query('expires'), signature: c.req.query('signature') }
    const check = await checkMediaLink(encryptionKey(c.env), mediaId, q, now())
    if (!check.ok && check.reason === 'expired')
      throw new ApiError(410, 'link_expired', 'This media link has expired; GET /v1/media/{id}/link with your API key gives a fresh one')
    if (!check.ok) throw new ApiError(403, 'invalid_signature', 'This media link is not valid (signature mismatch)')
    const row = await linkedMedia(c.env, mediaId, q.tenant)
    if (!row) throw new ApiError(404, 'media_not_found', 'This media is no longer kept')
    if (row.status === 'too_large') throw new ApiError(413, 'media_too_large', row.reason ?? 'the item was over the size cap and was not stored')
    if (row.status === 'unavailable') throw new ApiError(404, 'media_unavailable', row.reason ?? "the provider's copy could not be fetched")
    const res = await serveMedia(c.env.MEDIA, row, c.req.header('range'))
    if (!res) throw new ApiError(404, 'media_not_found', 'This media is no longer kept')
    return res
  })
  return routes
}
