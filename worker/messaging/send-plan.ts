/**
 * Every check POST /messages makes before the AccountDO's guards (spec 4.2, 7), in the order the send makes them: the
 * media URL, the key's accounts, the account, the recipient and their flags, a restricted account's new chats, a reply
 * key's window, the channel's own rules, the quoted message (issue 25), then whether the key holds the send for the
 * owner. Reads only. A send and its dry run (messaging/send-check.ts) both run this one function, so a dry run
 * refuses exactly what the send would.
 */
import type { z } from 'zod'
import type { SendMessageBody } from '../../schema/api/messages'
import { contentTypeFromUrl } from '../../common/media'
import { checkPublicUrl } from '../../common/public-url'
import { sendRulesFor } from '../channels/registry'
import type { SendRules } from '../channels/contract'
import { urlPolicy } from '../config'
import { tenantAndAccounts, type AccountRow } from '../db/accounts'
import type { Db } from '../db/client'
import { getMessage } from '../db/messages'
import type { Tenant } from '../db/tenants'
import type { AuditNote, KeyGrant } from '../env'
import { ApiError } from '../errors'
import { checkAccount } from '../safety/key-refusals'
import { checkReplyWindow } from '../safety/reply-window'
import { unsupportedOnChannel } from './actions'
import { refuseNewChatIfRestricted, resolveAccount, resolveRecipient, type Recipient } from './resolve'

export type SendRequest = {
  env: Env
  db: Db
  /** The authenticated tenant (the row is read again fresh: a suspension binds at once). */
  tenant: Tenant
  grant: KeyGrant
  requestUrl: string
  body: z.infer<typeof SendMessageBody>
  now: number
  /** What the route learns for its audit entry, as it learns it. */
  note(n: AuditNote): void
}

export type SendPlan = {
  tenant: Tenant
  account: AccountRow
  channel: SendRules
  contact: Recipient
  mediaUrl: string | null
  mediaContentType: string | null
  /** The key holds first messages for the owner, and this person never wrote: the send waits as awaiting_approval. */
  hold: boolean
}

/** How far the plan got: a dry run that stops early still reports the account (and person) it had found. */
export type PlanProgress = { tenant?: Tenant; account?: AccountRow; contact?: Recipient }

/** The statuses of a message that exists on the network, so a reply can quote it. */
const ON_THE_NETWORK = new Set(['received', 'sent', 'delivered', 'read'])

/** A quoted message (issue 25) must be one of this account's messages with this person that reached the network. */
async function checkQuoted(db: Db, tenantId: string, account: AccountRow, channel: SendRules, contactId: string, id: string): Promise<void> {
  if (!channel.actions.reply) throw unsupportedOnChannel(channel.title, 'reply')
  const quoted = await getMessage(db, tenantId, id)
  if (!quoted || quoted.message.accountId !== account.id || quoted.message.contactId !== contactId) {
    throw new ApiError(422, 'invalid_reply_to', `reply_to: no message ${id} of account ${account.id} with this person`)
  }
  if (!ON_THE_NETWORK.has(quoted.message.status)) {
    throw new ApiError(422, 'invalid_reply_to', `reply_to: message ${id} is ${quoted.message.status}; only a message that reached the network can be quoted`)
  }
}

export async function planSend(r: SendRequest, progress: PlanProgress = {}): Promise<SendPlan> {
  const { body, db, grant } = r
  // The channel (or a relay) fetches the attachment on the user's behalf: the one SSRF guard vets it first.
  const media = body.media_url === undefined ? undefined : checkPublicUrl(body.media_url, urlPolicy(r.env, r.requestUrl))
  if (media && !media.ok) throw new ApiError(400, 'invalid_media_url', `media_url is not allowed: ${media.reason}`)
  const fresh = await tenantAndAccounts(db, r.tenant.id)
  const tenant = fresh.tenant ?? r.tenant
  progress.tenant = tenant
  // A key limited to some accounts may not send from another, named or picked as the only connected one.
  checkAccount(grant, body.account_id)
  const account = resolveAccount(tenant, fresh.accounts, body.account_id, (a) => sendRulesFor(a.channel)?.repliesWhileRestricted?.(a.statusReason) ?? false)
  checkAccount(grant, account.id)
  r.note({ accountId: account.id })
  progress.account = account
  const channel = sendRulesFor(account.channel)
  if (!channel) throw new ApiError(501, 'not_implemented', `Sending on the ${account.channel} channel is not available yet`)
  const contact = await resolveRecipient(db, tenant.id, account, channel, body.to)
  r.note({ contactId: contact.id })
  progress.contact = contact
  refuseNewChatIfRestricted(account, contact)
  if (grant.scope === 'reply') checkReplyWindow(grant, contact.lastInboundAt, r.now)
  await channel.checkSend?.({
    env: r.env,
    db,
    account,
    contact: { id: contact.id, known: contact.known, hasInbound: contact.hasInbound, lastInboundAt: contact.lastInboundAt },
    mediaUrl: body.media_url ?? null,
    now: r.now,
  })
  if (body.reply_to !== undefined) await checkQuoted(db, tenant.id, account, channel, contact.id, body.reply_to)
  return {
    tenant,
    account,
    channel,
    contact,
    mediaUrl: body.media_url ?? null,
    mediaContentType: body.media_url ? contentTypeFromUrl(body.media_url) : null,
    hold: grant.approval && !contact.hasInbound,
  }
}
