/**
 * The Worker's side of the chat actions (issue 25): what a reaction, a read mark, typing or a lookup acts on, checked
 * like a send (the key's accounts, a reply key's window, the account's state, whether the channel can), then handed to
 * the account's AccountDO, which counts it against the account's own limits and has its channel carry it out
 * (account/actions.ts). Channels that cannot answer 422 `unsupported_on_channel` naming the channel.
 */
import type { z } from 'zod'
import { CHAT_ACTION_TITLES, type ActionDone, type ChatActionName, type LookupResult } from '../../schema/api/actions'
import type { SendMessageBody } from '../../schema/api/messages'
import type { ActionContact, ChannelAction } from '../account/context'
import type { ActOutcome } from '../account/actions'
import { sendRulesFor } from '../channels/registry'
import type { SendRules } from '../channels/contract'
import { tenantAndAccounts, type AccountRow } from '../db/accounts'
import type { Db } from '../db/client'
import type { ContactRow } from '../db/contacts'
import { getMessage, type MessageWithContact } from '../db/messages'
import type { AuditNote, KeyGrant } from '../env'
import { ApiError } from '../errors'
import { accountStub } from '../lib/objects'
import { iso } from '../lib/time'
import { checkAccount } from '../safety/key-refusals'
import { checkReplyWindow } from '../safety/reply-window'
import { resolveRecipient } from './resolve'

export function unsupportedOnChannel(title: string, action: ChatActionName): ApiError {
  return new ApiError(
    422,
    'unsupported_on_channel',
    `${CHAT_ACTION_TITLES[action]} are not available on the ${title} (docs/api.md, "Replies, reactions, typing and read marks")`
  )
}

export type ActionRequest = { env: Env; db: Db; tenantId: string; grant: KeyGrant; now: number; note(n: AuditNote): void }

/** The statuses of a message that exists on the network (a reaction or read mark can name it). */
const ON_THE_NETWORK = new Set(['received', 'sent', 'delivered', 'read'])

/** The account an action runs on: the key may use it, it is connected (or restricted, which still acts in existing chats), and its channel can. */
async function actingAccount(r: ActionRequest, accountId: string, action: ChatActionName): Promise<{ account: AccountRow; rules: SendRules }> {
  checkAccount(r.grant, accountId)
  const { tenant, accounts } = await tenantAndAccounts(r.db, r.tenantId)
  const account = accounts.find((a) => a.id === accountId)
  if (!tenant || !account) throw new ApiError(404, 'account_not_found', `No account ${accountId} on this API key`)
  r.note({ accountId })
  const rules = sendRulesFor(account.channel)
  if (!rules?.actions[action]) throw unsupportedOnChannel(rules?.title ?? account.channel, action)
  if (tenant.status === 'suspended') throw new ApiError(403, 'account_suspended', 'Sending is suspended until the service reviews this account')
  if (account.status !== 'connected' && account.status !== 'restricted') {
    throw new ApiError(409, 'account_not_connected', `Account ${account.id} is ${account.status}; it can act once connected`)
  }
  return { account, rules }
}

function contactOf(row: { id: string } & Partial<Pick<ContactRow, 'phone' | 'peerId' | 'socialId' | 'externalId'>>): ActionContact {
  return { id: row.id, phone: row.phone ?? null, peerId: row.peerId ?? null, socialId: row.socialId ?? null, externalId: row.externalId ?? null }
}

/** A reply key may act only in the chats it may answer (its window); the others act wherever the account may. */
function checkWindow(r: ActionRequest, lastInboundAt: number | null): void {
  if (r.grant.scope === 'reply') checkReplyWindow(r.grant, lastInboundAt, r.now)
}

function refused(outcome: Extract<ActOutcome, { ok: false }>): ApiError {
  return new ApiError(outcome.status, outcome.code, outcome.message, outcome.retryAfterS)
}

async function run(account: AccountRow, r: ActionRequest, action: ChannelAction, row: MessageWithContact | null): Promise<Extract<ActOutcome, { ok: true }>> {
  const outcome = await accountStub(r.env, r.tenantId, account.id).act({ tenantId: r.tenantId, accountId: account.id, channel: account.channel }, action, row)
  if (!outcome.ok) throw refused(outcome)
  return outcome
}

/** The message an action names: the key's, in a chat it may act in, and on the network. */
async function targetMessage(r: ActionRequest, messageId: string): Promise<MessageWithContact> {
  const row = await getMessage(r.db, r.tenantId, messageId)
  if (!row) throw new ApiError(404, 'message_not_found', 'No such message on this API key')
  checkAccount(r.grant, row.message.accountId)
  r.note({ accountId: row.message.accountId, contactId: row.message.contactId, messageId })
  if (!ON_THE_NETWORK.has(row.message.status)) {
    throw new ApiError(422, 'message_not_on_network', `Message ${messageId} is ${row.message.status}; only a message that reached the network can be acted on`)
  }
  return row
}

/** POST (emoji) or DELETE (null) /messages/{id}/reactions. */
export async function react(r: ActionRequest, messageId: string, emoji: string | null): Promise<z.infer<typeof ActionDone>> {
  const row = await targetMessage(r, messageId)
  const { account } = await actingAccount(r, row.message.accountId!, 'react')
  checkWindow(r, row.contact?.lastInboundAt ?? null)
  const target = { messageId, upstreamId: row.message.upstreamId, fromMe: row.message.direction === 'outbound' }
  const done = await run(account, r, { kind: 'react', contact: contactOf(row.contact ?? { id: row.message.contactId }), target, emoji }, row)
  return { action: emoji === null ? 'unreact' : 'react', account_id: account.id, message_id: messageId, contact_id: row.message.contactId, at: iso(done.at) }
}

/** POST /messages/{id}/read: read marks up to this inbound message (never automatic: the caller asks). */
export async function markRead(r: ActionRequest, messageId: string): Promise<z.infer<typeof ActionDone>> {
  const row = await targetMessage(r, messageId)
  if (row.message.direction !== 'inbound')
    throw new ApiError(422, 'message_not_inbound', `Message ${messageId} was sent by the account; only received messages are marked read`)
  const { account } = await actingAccount(r, row.message.accountId!, 'read')
  checkWindow(r, row.contact?.lastInboundAt ?? null)
  const target = { messageId, upstreamId: row.message.upstreamId }
  const done = await run(account, r, { kind: 'read', contact: contactOf(row.contact ?? { id: row.message.contactId }), target }, null)
  return { action: 'read', account_id: account.id, message_id: messageId, contact_id: row.message.contactId, at: iso(done.at) }
}

/** POST /accounts/{id}/typing: shows the account typing to a person it has a chat with, for a few seconds. */
export async function typing(r: ActionRequest, accountId: string, to: z.infer<typeof SendMessageBody>['to']): Promise<z.infer<typeof ActionDone>> {
  const { account, rules } = await actingAccount(r, accountId, 'typing')
  const person = await resolveRecipient(r.db, r.tenantId, account, rules, to)
  if (!person.known) throw new ApiError(404, 'contact_not_found', 'Typing shows only in a chat the account has with this person')
  r.note({ contactId: person.id })
  checkWindow(r, person.lastInboundAt)
  const done = await run(account, r, { kind: 'typing', contact: contactOf(person) }, null)
  return { action: 'typing', account_id: account.id, message_id: null, contact_id: person.id, at: iso(done.at) }
}

/** GET /accounts/{id}/lookup: whether a number is on the account's channel, rate-limited and cached by the account. */
export async function lookup(r: ActionRequest, accountId: string, phone: string): Promise<z.infer<typeof LookupResult>> {
  const { account } = await actingAccount(r, accountId, 'lookup')
  const done = await run(account, r, { kind: 'lookup', phone }, null)
  const answer = done.lookup ?? { onNetwork: null, reason: 'the channel gave no answer', cached: false, checkedAt: done.at }
  return {
    account_id: account.id,
    channel: account.channel,
    phone,
    on_network: answer.onNetwork,
    reason: answer.reason,
    cached: answer.cached,
    checked_at: iso(answer.checkedAt),
  }
}
