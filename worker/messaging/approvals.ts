/**
 * Owner approval before a first message (docs/agent-safety.md). A key with `approval` on holds a send to someone
 * who never wrote to the account as `awaiting_approval` (an extension of spec §3) and emits
 * `message.approval_required` (an extension of §6) with a signed, expiring link. The owner approves or rejects
 * with the owner's key or on the hosted page (whose link reaches only destinations the owner configured); an approved message then runs every limit in the AccountDO as if it were
 * sent at that moment, and a limit hit fails it with the limit's code. Rejected and expired messages fail with a
 * reason. Exactly one decision wins (db/approvals.ts claimDecision). It sends, so it sits with the send path; the
 * rules it applies (grants, approval links) are safety/.
 */
import { accountStub } from '../lib/objects'
import { tenantAndAccounts } from '../db/accounts'
import { auditInsert } from '../db/audit'
import { claimDecision, dueApprovals, failHeldMessage, getApproval, insertApproval, type ApprovalRow } from '../db/approvals'
import type { Db } from '../db/client'
import { getApiKey } from '../db/api-keys'
import { directory } from '../db/shards'
import { getContact, insertContactIfMissing, type ContactSeed } from '../db/contacts'
import { insertEvent } from '../db/events'
import { getMessage, insertMessage, type MessageWithContact } from '../db/messages'
import type { AccountRow } from '../db/accounts'
import { ApiError } from '../errors'
import { messageEventFromRow, messageEventPayload } from '../events/payloads'
import { iso } from '../lib/time'
import { resolveAccount } from './resolve'
import { commitEvents } from '../webhooks/emit'
import { approvalLinks } from '../safety/approval-token'
import { APPROVAL_TTL_MS, type KeyGrant } from '../safety/grant'

export const REJECTED_REASON = 'approval_rejected: the owner rejected this message'
export const EXPIRED_REASON = 'approval_expired: nobody approved this message in time'
const EXPIRIES_PER_SWEEP = 100

export type HoldInput = {
  tenantId: string
  account: AccountRow
  contact: ContactSeed
  grant: KeyGrant
  messageId: string
  text: string
  mediaUrl: string | null
  mediaContentType: string | null
  /** The message this one quotes (issue 25), kept on the held message and sent with it once approved. */
  replyTo?: string | null
}

/** Stores the held message, its approval and the `message.approval_required` event in one batch. */
export async function holdMessage(env: Env, db: Db, requestUrl: string, h: HoldInput, now: number): Promise<void> {
  const expiresAt = now + APPROVAL_TTL_MS
  const links = await approvalLinks(env, requestUrl, { tenant: h.tenantId, message: h.messageId }, expiresAt)
  const message = {
    id: h.messageId,
    accountId: h.account.id,
    direction: 'outbound' as const,
    text: h.text,
    mediaUrl: h.mediaUrl,
    mediaContentType: h.mediaContentType,
    status: 'awaiting_approval' as const,
    errorMessage: null,
  }
  const event = {
    ...messageEventPayload(
      'message.approval_required',
      message,
      { id: h.contact.id, phone: h.contact.phone ?? null, name: h.contact.name ?? null },
      h.account.channel,
      now
    ),
    approval: { ...links, expires_at: iso(expiresAt), key_id: h.grant.id, key_label: h.grant.label },
  }
  await commitEvents(env, db, [
    insertContactIfMissing(db, h.contact, now),
    insertMessage(db, { ...message, tenantId: h.tenantId, contactId: h.contact.id, replyTo: h.replyTo ?? null, createdAt: now, updatedAt: now }),
    insertApproval(db, { messageId: h.messageId, tenantId: h.tenantId, accountId: h.account.id, keyId: h.grant.id, expiresAt, createdAt: now }),
    insertEvent(db, h.tenantId, h.account.id, event, now),
  ])
}

async function failHeld(env: Env, db: Db, row: MessageWithContact, channel: string, reason: string, now: number) {
  const failed: MessageWithContact = { ...row, message: { ...row.message, status: 'failed', errorCode: null, errorMessage: reason } }
  const event = messageEventFromRow('message.failed', failed, channel, now)
  await commitEvents(env, db, failHeldMessage(db, row.message.tenantId, row.message.accountId, row.message.id, reason, event, now))
}

export type Decided = { message: MessageWithContact; approval: ApprovalRow }

async function heldMessage(db: Db, tenantId: string, messageId: string): Promise<{ row: MessageWithContact; approval: ApprovalRow }> {
  const [row, approval] = await Promise.all([getMessage(db, tenantId, messageId), getApproval(db, tenantId, messageId)])
  if (!row) throw new ApiError(404, 'message_not_found', 'No such message on this API key')
  if (!approval || row.message.status !== 'awaiting_approval' || approval.decidedAt !== null) {
    throw new ApiError(409, 'not_awaiting_approval', `Message ${messageId} is ${row.message.status}, not awaiting approval`)
  }
  return { row, approval }
}

/**
 * Approves or rejects a held message. Approval sends it through the AccountDO's limits now: a refusal fails the
 * message with the limit's code and is thrown as that limit's ApiError, as a send would answer.
 */
export async function decide(env: Env, db: Db, tenantId: string, messageId: string, decision: 'approve' | 'reject', now: number): Promise<Decided> {
  const { row, approval } = await heldMessage(db, tenantId, messageId)
  const fresh = await tenantAndAccounts(db, tenantId)
  const channel = fresh.accounts.find((a) => a.id === row.message.accountId)?.channel ?? 'unknown'
  if (approval.expiresAt <= now) {
    if (await claimDecision(db, tenantId, messageId, 'expired', now)) await failHeld(env, db, row, channel, EXPIRED_REASON, now)
    throw new ApiError(409, 'approval_expired', `The approval of message ${messageId} expired at ${iso(approval.expiresAt)}; the message failed`)
  }
  const claimed = await claimDecision(db, tenantId, messageId, decision === 'approve' ? 'approved' : 'rejected', now)
  if (!claimed) throw new ApiError(409, 'not_awaiting_approval', `Message ${messageId} was decided already`)
  if (decision === 'reject') {
    await failHeld(env, db, row, channel, REJECTED_REASON, now)
    return { message: (await getMessage(db, tenantId, messageId))!, approval: claimed }
  }
  let account: AccountRow
  try {
    if (!fresh.tenant) throw new ApiError(404, 'account_not_found', 'No such tenant')
    account = resolveAccount(fresh.tenant, fresh.accounts, row.message.accountId)
  } catch (err) {
    if (err instanceof ApiError) await failHeld(env, db, row, channel, `${err.code}: ${err.message}`, now)
    throw err
  }
  const contact = await getContact(db, tenantId, row.message.contactId)
  const tenant = fresh.tenant!
  const outcome = await accountStub(env, tenantId, account.id).send({
    ref: { tenantId, accountId: account.id, channel: account.channel },
    tenant: { plan: tenant.plan, suspended: tenant.status === 'suspended' },
    messageId,
    contact: {
      id: row.message.contactId,
      tenantId,
      accountId: account.id,
      channel: account.channel,
      phone: contact?.phone ?? null,
      externalId: contact?.externalId ?? null,
      socialId: contact?.socialId ?? null,
      peerId: contact?.peerId ?? null,
      // Not written (the contact exists); carried so a limit's refusal names the person in message.failed.
      name: contact?.name ?? null,
      firstName: contact?.firstName ?? null,
      lastName: contact?.lastName ?? null,
      username: contact?.username ?? null,
      hasInbound: contact?.firstInboundAt != null,
    },
    text: row.message.text,
    mediaUrl: row.message.mediaUrl,
    mediaContentType: row.message.mediaContentType,
    held: true,
  })
  if (!outcome.ok) {
    const r = outcome.refusal
    throw new ApiError(r.status, r.code, `${r.message}; the message failed`, r.retryAfterS)
  }
  return { message: (await getMessage(db, tenantId, messageId))!, approval: claimed }
}

/** The cron's sweep: held messages past their approval's expiry fail with `approval_expired`; answers how many. */
export async function expireApprovals(env: Env, db: Db, now: number): Promise<number> {
  let expired = 0
  for (const a of await dueApprovals(db, now, EXPIRIES_PER_SWEEP)) {
    const row = await getMessage(db, a.tenantId, a.messageId)
    if (!(await claimDecision(db, a.tenantId, a.messageId, 'expired', now))) continue
    if (row?.message.status === 'awaiting_approval') {
      const { accounts } = await tenantAndAccounts(db, a.tenantId)
      await failHeld(env, db, row, accounts.find((x) => x.id === a.accountId)?.channel ?? 'unknown', EXPIRED_REASON, now)
    }
    const key = await getApiKey(directory(env), a.tenantId, a.keyId)
    await auditInsert(db, {
      tenantId: a.tenantId,
      keyId: a.keyId,
      keyLabel: key?.label ?? null,
      action: 'approval expiry',
      route: 'cron',
      accountId: a.accountId,
      contactId: row?.message.contactId ?? null,
      messageId: a.messageId,
      outcome: 'rejected',
      code: 'approval_expired',
      status: 409,
      createdAt: now,
    })
    expired++
  }
  return expired
}
