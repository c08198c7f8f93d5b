/**
 * GET /v1/media/{mediaId} (tool get_media): the bytes of one stored item to its tenant's API key, with Range support;
 * GET /v1/media/{mediaId}/link: a fresh signed link (docs/media.md). Another tenant's id is 404, as is an item that
 * retention or account removal deleted; an item that was over the size cap answers 413 with the reason.
 */
import { createRoute } from '@hono/zod-openapi'
import { MediaIdParam, MediaLink } from '../../schema/api/media'
import { encryptionKey, mediaConfig, mediaOrigin } from '../config'
import type { Db } from '../db/client'
import { getMedia, type MediaRow } from '../db/media'
import { ApiError } from '../errors'
import { checkAccount } from '../safety/key-refusals'
import type { KeyGrant } from '../safety/grant'
import { iso } from '../lib/time'
import { signedMediaUrl } from '../media/links'
import { serveMedia } from '../media/serve'
import { resourceApp } from '../validate'
import { statusErrors } from '../lib/openapi-responses'

export const mediaRoutes = resourceApp()

/** The item, when it is the key's: another tenant's is 404, another account's (for a key limited to some) 403. */
async function ownMedia(db: Db, tenantId: string, grant: KeyGrant, mediaId: string): Promise<MediaRow> {
  const row = await getMedia(db, mediaId)
  if (!row || row.tenantId !== tenantId) throw new ApiError(404, 'media_not_found', `No media ${mediaId}`)
  checkAccount(grant, row.accountId)
  if (row.status === 'too_large') throw new ApiError(413, 'media_too_large', row.reason ?? 'the item was over the size cap and was not stored')
  if (row.status === 'unavailable') throw new ApiError(404, 'media_unavailable', row.reason ?? "the provider's copy could not be fetched")
  return row
}

mediaRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/{mediaId}',
    tags: ['Media'],
    operationId: 'get_media',
    summary: 'Get media',
    description: [
      'Fetches the media of a message by its media.id (photo, voice note, audio, video, document, sticker). Images come back as an image block, audio and voice notes as an audio block (up to 5 MiB); anything else as a summary, fetch it by media.url.',
      'The content of an inbound photo, video, audio file, voice note, document or sticker, with its `Content-Type`. Supports `Range: bytes=…` (206 with `Content-Range`, 416 outside the item). Always answers for your own media while it is kept (retention: 30 days by default), so an expired `media.url` is never a dead end. 404 for an unknown id or another tenant’s; 403 `key_account` for an item of an account the key does not list; 413 when the item was over the size cap and is not stored.',
    ].join('\n\n'),
    request: { params: MediaIdParam },
    responses: {
      200: { description: 'The whole item', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
      206: { description: 'The requested byte range' },
      416: { description: 'The range lies outside the item' },
      ...statusErrors([400, 401, 403, 404, 413], {
        403: '`key_account`: the item belongs to an account this key does not list',
        404: 'No such media for this key (or no longer kept); `media_unavailable` when the provider’s copy (SMS, page inbox) could not be fetched',
        413: 'Over the size cap: not stored; the error says why',
      }),
    },
  }),
  async (c) => {
    const row = await ownMedia(c.var.db, c.get('tenant').id, c.get('key'), c.req.valid('param').mediaId)
    const res = await serveMedia(c.env.MEDIA, row, c.req.header('range'))
    if (!res) throw new ApiError(404, 'media_not_found', `Media ${row.id} is no longer kept`)
    return res
  }
)

mediaRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/{mediaId}/link',
    tags: ['Media'],
    operationId: 'get_media_link',
    summary: 'Get a fresh signed link to a media item',
    description: 'A new signed `url` for the item (the same form as `media.url`), valid until `expires_at` (24 hours by default) without an API key.',
    request: { params: MediaIdParam },
    responses: {
      200: { description: 'A fresh link', content: { 'application/json': { schema: MediaLink } } },
      ...statusErrors([400, 401, 403, 404, 413], { 403: '`key_account`: the item belongs to an account this key does not list' }),
    },
  }),
  async (c) => {
    const row = await ownMedia(c.var.db, c.get('tenant').id, c.get('key'), c.req.valid('param').mediaId)
    const expiresAt = Date.now() + mediaConfig(c.env).linkTtlMs
    const url = await signedMediaUrl(encryptionKey(c.env), mediaOrigin(c.env, c.req.url), row.tenantId, row.id, expiresAt)
    return c.json({ id: row.id, url, expires_at: iso(expiresAt), content_type: row.contentType, size: row.size, kind: row.kind, file_name: row.fileName }, 200)
  }
)
