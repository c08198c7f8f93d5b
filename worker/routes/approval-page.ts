/**
 * /approvals: the hosted page of a held message (docs/agent-safety.md), reached by the signed, expiring link of
 * `message.approval_required`; no API key. GET shows the message, POST (the page's buttons) decides it.
 */
import { Hono, type Context } from 'hono'
import { z } from 'zod'
import { getApiKey } from '../db/api-keys'
import { auditInsert } from '../db/audit'
import { getApproval } from '../db/approvals'
import { tenantAndAccounts } from '../db/accounts'
import { knownTenantDb } from '../db/placement'
import { directory } from '../db/shards'
import { getMessage } from '../db/messages'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { iso } from '../lib/time'
import { approvalPageHtml, approvalResultHtml } from '../safety/approval-page-html'
import { readApprovalToken, type ApprovalClaims } from '../safety/approval-token'
import { decide } from '../messaging/approvals'

export const approvalPageRoutes = new Hono<AppEnv>()

const HEADERS = {
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
}

const Decision = z.enum(['approve', 'reject'])

function result(c: Context<AppEnv>, status: 200 | 403 | 404 | 409 | 410 | 429, title: string, detail: string) {
  return c.html(approvalResultHtml(title, detail), status, HEADERS)
}

async function claims(c: Context<AppEnv>, token: string | undefined): Promise<ApprovalClaims | Response> {
  if (!token) return result(c, 403, 'This link is not valid', 'The link is incomplete: its token is missing.')
  const check = await readApprovalToken(c.env, token, Date.now())
  if (check.ok) return check.payload
  if (check.reason === 'expired') return result(c, 410, 'This link has expired', 'Nobody approved the message in time, so it was not sent.')
  return result(c, 403, 'This link is not valid', 'The link was changed or is not one this service made.')
}

approvalPageRoutes.get('/', async (c) => {
  const token = c.req.query('token')
  const claim = await claims(c, token)
  if (claim instanceof Response) return claim
  const db = await knownTenantDb(c.env, claim.tenant)
  const [row, approval, { accounts }] = await Promise.all([
    getMessage(db, claim.tenant, claim.message),
    getApproval(db, claim.tenant, claim.message),
    tenantAndAccounts(db, claim.tenant),
  ])
  const key = approval && (await getApiKey(directory(c.env), claim.tenant, approval.keyId))
  if (!row || !approval) return result(c, 404, 'Message not found', 'This message no longer exists.')
  if (row.message.status !== 'awaiting_approval') {
    return result(c, 409, 'Already decided', `This message is ${row.message.status}${row.message.errorMessage ? ` (${row.message.errorMessage})` : ''}.`)
  }
  const picked = Decision.safeParse(c.req.query('decision'))
  const contact = row.contact
  return c.html(
    approvalPageHtml(
      token!,
      {
        accountId: row.message.accountId,
        channel: accounts.find((a) => a.id === row.message.accountId)?.channel ?? '',
        to: contact?.name ?? contact?.phone ?? contact?.externalId ?? contact?.socialId ?? row.message.contactId,
        text: row.message.text,
        mediaUrl: row.message.mediaUrl,
        keyLabel: key?.label ?? null,
        keyId: approval.keyId,
        expiresAt: iso(approval.expiresAt),
      },
      picked.success ? picked.data : undefined
    ),
    200,
    HEADERS
  )
})

approvalPageRoutes.post('/', async (c) => {
  const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>)
  const token = typeof form.token === 'string' ? form.token : undefined
  const decision = Decision.safeParse(form.decision)
  const claim = await claims(c, token)
  if (claim instanceof Response) return claim
  if (!decision.success) return result(c, 403, 'This link is not valid', 'Choose approve or reject.')
  const db = await knownTenantDb(c.env, claim.tenant)
  const now = Date.now()
  const [approval, held] = await Promise.all([getApproval(db, claim.tenant, claim.message), getMessage(db, claim.tenant, claim.message)])
  // Recorded under the key that held the message, with its label and the person, like every other entry.
  const key = approval && (await getApiKey(directory(c.env), claim.tenant, approval.keyId))
  const audit = (outcome: 'approved' | 'rejected' | 'refused', code: string | null, status: number) =>
    approval &&
    auditInsert(db, {
      tenantId: claim.tenant,
      keyId: approval.keyId,
      keyLabel: key?.label ?? null,
      action: 'approval page',
      route: 'POST /approvals',
      accountId: approval.accountId,
      contactId: held?.message.contactId ?? null,
      messageId: claim.message,
      outcome,
      code,
      status,
      createdAt: now,
    })
  try {
    const { message } = await decide(c.env, db, claim.tenant, claim.message, decision.data, now)
    await audit(decision.data === 'approve' ? 'approved' : 'rejected', null, 200)
    return decision.data === 'approve'
      ? result(c, 200, 'Approved', `The message is ${message.message.status}: it passed every limit and is on its way.`)
      : result(c, 200, 'Rejected', 'The message was not sent.')
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    await audit('refused', err.code, err.status)
    if (err.code === 'not_awaiting_approval') return result(c, 409, 'Already decided', err.message)
    if (err.code === 'approval_expired') return result(c, 410, 'This link has expired', 'Nobody approved the message in time, so it was not sent.')
    if (err.code === 'message_not_found') return result(c, 404, 'Message not found', 'This message no longer exists.')
    return result(c, err.status === 429 ? 429 : 409, 'Not sent', `A sending limit refused the message, so it failed: ${err.code}. ${err.message}`)
  }
})
