/**
 * /admin/secrets: the sealing keyring's state and the re-seal walk that moves every sealed value to the current
 * key (docs/security.md, Secret rotation; `npm run reseal` drives it). Guarded by ADMIN_TOKEN like all of /admin.
 */
import { createRoute } from '@hono/zod-openapi'
import { z } from 'zod'
import { ResealAnswer, ResealBody, SecretsStatus } from '../../schema/api/admin'
import { keyring } from '../config'
import { countNotCurrent, RESEAL_START, resealPage, type ResealPosition } from '../db/sealed-values'
import { shardBindings } from '../db/shards'
import { ApiError } from '../errors'
import { base64urlText, fromBase64urlText } from '../lib/base64url'
import { statusErrors } from '../lib/openapi-responses'
import { currentPrefix, SEALED_COLUMNS } from '../lib/sealed'
import { emptyBodyIsNone, resourceApp } from '../validate'

export const adminSecretRoutes = resourceApp()
adminSecretRoutes.use('/reseal', emptyBodyIsNone)

const security = [{ adminToken: [] }]
const DEFAULT_RESEAL_LIMIT = 100

const Column = z.enum(SEALED_COLUMNS)
/** [shard, column, tenant, row] or [shard, column]; a cursor from before shards has no shard number (shard 0). */
const Cursor = z
  .tuple([z.number().int().min(0), Column, z.string(), z.string()])
  .or(z.tuple([z.number().int().min(0), Column]))
  .or(z.tuple([Column, z.string(), z.string()]).transform(([column, t, r]) => [0, column, t, r] as const))
  .or(z.tuple([Column]).transform(([column]) => [0, column] as const))

function encodeCursor(p: ResealPosition): string {
  return base64urlText(JSON.stringify(p.after ? [p.shard, p.column, p.after.tenantId, p.after.rowId] : [p.shard, p.column]))
}

function decodeCursor(raw: string): ResealPosition {
  const text = fromBase64urlText(raw)
  let parsed: unknown
  try {
    parsed = text === null ? null : JSON.parse(text)
  } catch {
    parsed = null
  }
  const cursor = Cursor.safeParse(parsed)
  if (!cursor.success) throw new ApiError(400, 'invalid_cursor', 'cursor is not a next_cursor of this endpoint')
  const [shard, column, tenantId, rowId] = cursor.data
  return { shard, column, after: tenantId === undefined || rowId === undefined ? null : { tenantId, rowId } }
}

adminSecretRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/',
    tags: ['Admin'],
    summary: 'Sealing keys and what is left to re-seal',
    description:
      'The key id new secrets are sealed with, the ids in the keyring (ENCRYPTION_KEY as `default`, ENCRYPTION_KEYS), and per sealed column how many values are not under that key yet. Remove an old key only when `total_not_current` is 0.',
    security,
    responses: { 200: { description: 'The keyring state', content: { 'application/json': { schema: SecretsStatus } } }, ...statusErrors([401]) },
  }),
  async (c) => {
    const ring = keyring(c.env)
    const prefix = currentPrefix(ring)
    const shards = shardBindings(c.env)
    const count = async (col: (typeof SEALED_COLUMNS)[number]) =>
      (await Promise.all(shards.map((d1) => countNotCurrent(d1, col, prefix)))).reduce((a, b) => a + b, 0)
    const counts = await Promise.all(SEALED_COLUMNS.map(async (col) => [col, await count(col)] as const))
    return c.json(
      {
        success: true as const,
        key_id: ring.currentId,
        key_ids: [...ring.keys.keys()].sort(),
        not_current: Object.fromEntries(counts),
        total_not_current: counts.reduce((n, [, k]) => n + k, 0),
      },
      200
    )
  }
)

adminSecretRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/reseal',
    tags: ['Admin'],
    summary: 'Re-seal stored secrets under the current key, one bounded page at a time',
    description:
      'Opens up to `limit` sealed values (under any key of the ring, or the format from before key ids) and seals each again under ENCRYPTION_KEY_ID for the same row, skipping values already under it. Each write happens only if the value is unchanged since it was read, so running it during traffic, twice, or from an old cursor is safe. Call again with `next_cursor` until it is null; `npm run reseal` does this.',
    security,
    request: { body: { required: false, content: { 'application/json': { schema: ResealBody } } } },
    responses: {
      200: { description: 'One page of the walk', content: { 'application/json': { schema: ResealAnswer } } },
      ...statusErrors([400, 401]),
    },
  }),
  async (c) => {
    const body = c.req.valid('json') ?? {}
    const ring = keyring(c.env)
    const from = body.cursor ? decodeCursor(body.cursor) : RESEAL_START
    const page = await resealPage(shardBindings(c.env), ring, from, body.limit ?? DEFAULT_RESEAL_LIMIT)
    return c.json(
      {
        success: true as const,
        key_id: ring.currentId,
        resealed: page.resealed,
        unreadable: page.unreadable.map((u) => ({ column: u.at.column, tenant_id: u.at.tenantId, row_id: u.at.rowId, error: u.error })),
        next_cursor: page.next ? encodeCursor(page.next) : null,
      },
      200
    )
  }
)
