/** /v1/audit: the audit log of the tenant's keys, newest first, in cursor pages (docs/agent-safety.md). */
import { createRoute } from '@hono/zod-openapi'
import { AuditPage, AuditQuery } from '../../schema/api/audit'
import { MessagingError } from '../../schema/api/common'
import { listAudit, type AuditRow } from '../db/audit'
import { ApiError } from '../errors'
import { decodeCursor, encodeCursor } from '../lib/cursor'
import { seqHere } from '../db/cursor-maps'
import { placementReader } from '../db/placement'
import { iso } from '../lib/time'
import { AUDIT_RETENTION_DAYS } from '../safety/audit-note'
import { resourceApp } from '../validate'

export const auditRoutes = resourceApp({ limit: 'invalid_limit', before: 'invalid_cursor', outcome: 'invalid_outcome' })

const json = (description: string) => ({ description, content: { 'application/json': { schema: MessagingError } } })

function entry(r: AuditRow) {
  return {
    id: String(r.seq),
    key_id: r.keyId,
    key_label: r.keyLabel,
    action: r.action,
    route: r.route,
    account_id: r.accountId,
    contact_id: r.contactId,
    message_id: r.messageId,
    outcome: r.outcome,
    code: r.code,
    status: r.status,
    created_at: iso(r.createdAt),
  }
}

auditRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/',
    tags: ['Audit'],
    summary: 'List the audit log',
    operationId: 'list_audit',
    description: [
      'Lists what the API keys did, newest first: every change and every call refused for the key, with key, tool or route, account, contact and outcome (accepted, refused, approved, rejected); filter by key_id, account_id or outcome and pass next_cursor as before for the next page.',
      [
        'What your keys did, newest first: every call that changes something (whatever its outcome) and every call refused',
        'for the key (`key_scope`, `key_account`, `key_expired`), with key id and label, route or MCP tool, account, contact,',
        `outcome (accepted, refused, approved, rejected) and time. Message texts are never copied here. Kept ${AUDIT_RETENTION_DAYS} days.`,
        'Pass `next_cursor` as `before` for the next page.',
      ].join(' '),
    ].join('\n\n'),
    request: { query: AuditQuery },
    responses: {
      200: { description: 'A page of entries', content: { 'application/json': { schema: AuditPage } } },
      400: json('Invalid limit, cursor or outcome'),
      401: json('Missing or invalid API key'),
      403: json('`key_expired`, or `key_account` for an account the key may not use'),
    },
  }),
  async (c) => {
    const q = c.req.valid('query')
    const tenant = c.get('tenant')
    const before = q.before === undefined ? undefined : decodeCursor('audit', q.before)
    const notACursor = () => new ApiError(400, 'invalid_cursor', 'before: not a cursor returned by GET /audit')
    if (before === null) throw notACursor()
    const beforeSeq =
      before && (await seqHere(c.var.db, tenant, 'audit', before, 'before', { placedAt: placementReader(c.env, tenant.id), refuse: notACursor }))
    const grant = c.get('key')
    // A key limited to some accounts sees their entries only; entries with no account stay with unlimited keys.
    if (grant.accounts !== null && q.account_id === undefined && grant.accounts.length !== 1) {
      throw new ApiError(400, 'invalid_account_id', `This key is limited to ${grant.accounts.join(', ')}: name one in account_id`)
    }
    const accountId = q.account_id ?? grant.accounts?.[0]
    const { rows, more } = await listAudit(c.var.db, {
      tenantId: tenant.id,
      keyId: q.key_id,
      accountId,
      outcome: q.outcome,
      beforeSeq,
      limit: q.limit,
    })
    const last = rows.at(-1)
    return c.json({ entries: rows.map(entry), next_cursor: more && last ? encodeCursor('audit', last.seq, tenant.placement) : null }, 200)
  }
)
