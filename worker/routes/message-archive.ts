/**
 * GET /v1/messages/archive (extension, docs/api.md "Retention and archive"): the messages retention deleted from one
 * account's day, as NDJSON, one message per line exactly as `GET /messages/{id}` showed it. Read like messages: a
 * read key may, and a key limited to some accounts only for those (checked on `account_id` by middleware/key-scope.ts).
 */
import { createRoute, type RouteConfig } from '@hono/zod-openapi'
import { MessagingError } from '../../schema/api/common'
import { ArchiveQuery } from '../../schema/api/messages'
import { archiveParts, archiveStream } from '../db/message-archive'
import { ApiError } from '../errors'
import { resourceApp } from '../validate'

export const messageArchiveRoutes = resourceApp({ account_id: 'invalid_account_id', date: 'invalid_date' })

const json = (description: string) => ({ description, content: { 'application/json': { schema: MessagingError } } })

// Typed as a record, not a literal: the answer is an NDJSON stream, which the typed handler cannot take for JSON.
const responses: RouteConfig['responses'] = {
  200: {
    description: 'The archived messages of that account and UTC day, one JSON message per line',
    content: { 'application/x-ndjson': { schema: { type: 'string', example: '{"id":"msg_…","account_id":"custom","direction":"inbound",…}\n' } } },
  },
  400: json('`invalid_account_id` or `invalid_date` (YYYY-MM-DD)'),
  401: json('Missing or invalid API key'),
  403: json('`key_account`: the key may not use that account'),
  404: json('`archive_not_found`: nothing archived for that account and day'),
}

messageArchiveRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/',
    tags: ['Messages'],
    summary: 'Read archived messages of one account and day',
    description: [
      'Messages older than your retention (`GET /usage` `retention.messages_days`, 90 days unless the service set',
      'another) are deleted by the gateway in whole UTC days; each is first archived here. The answer is NDJSON: one message',
      'per line, oldest first, each line the JSON `GET /messages/{id}` answered for it (media links unsigned: the',
      'bytes follow the media retention). 404 `archive_not_found` when nothing of that day was archived (not yet',
      'past the retention, or no messages).',
    ].join(' '),
    request: { query: ArchiveQuery },
    responses,
  }),
  async (c) => {
    const { account_id, date } = c.req.valid('query')
    const tenant = c.get('tenant')
    const keys = await archiveParts(c.env.MEDIA, tenant.id, account_id, date)
    if (keys.length === 0) throw new ApiError(404, 'archive_not_found', `Nothing of ${date} is archived for account ${account_id}`)
    return new Response(archiveStream(c.env.MEDIA, keys), { status: 200, headers: { 'Content-Type': 'application/x-ndjson; charset=utf-8' } })
  }
)
