/**
 * Resolving a send (spec 4.2 and 7): which account sends it and who receives it. Everything here is a read; the
 * recipient's contact row is only created once the AccountDO has accepted the send.
 */
import type { z } from 'zod'
import type { SendMessageBody } from '../../schema/api/messages'
import type { SendRules } from '../channels/contract'
import type { AccountRow } from '../db/accounts'
import type { Db } from '../db/client'
import { findContactByPhone, getContact, type ContactRow, type ContactSeed } from '../db/contacts'
import type { Tenant } from '../db/tenants'
import { ApiError } from '../errors'
import { contactIdFor, type ContactAddress } from '../lib/ids'

/**
 * The sending account: the one named, or the only connected one. A restricted account is refused unless its channel
 * still lets replies out under that restriction (`mayReply`); then the recipient decides (`refuseNewChatIfRestricted`).
 */
export function resolveAccount(
  tenant: Tenant,
  accounts: AccountRow[],
  accountId: string | undefined,
  mayReply: (a: AccountRow) => boolean = () => false
): AccountRow {
  if (tenant.status === 'suspended') {
    throw new ApiError(403, 'account_suspended', 'Sending is suspended until the service reviews this account')
  }
  if (accountId === undefined) {
    const connected = accounts.filter((a) => a.status === 'connected')
    if (connected.length === 0) throw new ApiError(409, 'no_connected_account', 'No account is connected; connect one first')
    if (connected.length > 1) {
      throw new ApiError(400, 'ambiguous_account', `Several accounts are connected (${connected.map((a) => a.id).join(', ')}); name one in account_id`)
    }
    return connected[0]!
  }
  const account = accounts.find((a) => a.id === accountId)
  if (!account) throw new ApiError(404, 'account_not_found', `No account ${accountId} on this API key`)
  if (account.status === 'restricted' && !mayReply(account)) {
    throw new ApiError(
      403,
      'account_restricted',
      `Account ${account.id} is restricted${account.statusReason ? ` (${account.statusReason})` : ''} and cannot send`
    )
  }
  if (account.status !== 'connected' && account.status !== 'restricted') {
    throw new ApiError(409, 'account_not_connected', `Account ${account.id} is ${account.status}; it can send once connected`)
  }
  return account
}

/** On a restricted account that may still reply, only people who wrote to it can be reached. */
export function refuseNewChatIfRestricted(account: AccountRow, recipient: { hasInbound: boolean }): void {
  if (account.status !== 'restricted' || recipient.hasInbound) return
  throw new ApiError(
    403,
    'account_restricted',
    `Account ${account.id} is restricted${account.statusReason ? ` (${account.statusReason})` : ''}: it may not start new chats; replies to people who wrote still go through`
  )
}

export type Recipient = ContactSeed & { hasInbound: boolean; known: boolean; lastInboundAt: number | null }

type To = z.infer<typeof SendMessageBody>['to']

const ADDRESS_MEMBER = { phone: 'to.phone', external: 'to.external_id', social: 'to.social_id' } as const

/** The address the channel takes besides `to.contact_id` (spec 4.2: phone on alpha, beta and SMS; external id; social id). */
function addressFor(rules: SendRules, to: To): ContactAddress {
  const given = to.phone !== undefined ? 'phone' : to.external_id !== undefined ? 'external' : to.social_id !== undefined ? 'social' : undefined
  const value = to.phone ?? to.external_id ?? to.social_id
  if (given === undefined || value === undefined) {
    throw new ApiError(400, 'invalid_recipient', 'Name the recipient with to.phone, to.contact_id, to.external_id or to.social_id')
  }
  if (given !== rules.address) {
    throw new ApiError(
      400,
      'invalid_recipient',
      `${ADDRESS_MEMBER[given]} does not address people on the ${rules.title}; use ${ADDRESS_MEMBER[rules.address]} or to.contact_id`
    )
  }
  return { kind: given, value }
}

/**
 * `to.contact_id` given with an address as well: the address must be the contact's own. One the contact does not
 * have (a null in the row: a custom contact's phone, a beta contact known by id only) cannot be checked, so it is
 * refused like a different one rather than ignored: the request may name two people.
 */
function refuseOtherAddress(contact: ContactRow, to: To): void {
  const given = [
    ['to.phone', to.phone, contact.phone],
    ['to.external_id', to.external_id, contact.externalId],
    ['to.social_id', to.social_id, contact.socialId],
  ] as const
  for (const [member, value, known] of given) {
    if (value !== undefined && value !== known) {
      throw new ApiError(400, 'invalid_recipient', `${member} is not the address of contact ${contact.id}: name one person`)
    }
  }
}

function existingRecipient(contact: ContactRow): Recipient {
  const { id, tenantId, accountId, channel, phone, externalId, socialId, peerId, lastInboundAt } = contact
  return { id, tenantId, accountId, channel, phone, externalId, socialId, peerId, hasInbound: contact.firstInboundAt !== null, known: true, lastInboundAt }
}

function refuseByFlags(contact: ContactRow): void {
  if (contact.private) throw new ApiError(422, 'contact_private', 'This contact is marked private: no messages are stored or sent')
  if (contact.optedOut) throw new ApiError(422, 'contact_opted_out', 'This person replied STOP and opted out of SMS')
  if (contact.doNotDisturb) throw new ApiError(422, 'contact_do_not_disturb', 'This person replied STOP and does not want messages')
}

export async function resolveRecipient(db: Db, tenantId: string, account: AccountRow, rules: SendRules, to: To): Promise<Recipient> {
  // The body's schema lets one address through (SendMessageBody), before any account is looked up.
  if (to.contact_id !== undefined) {
    const contact = await getContact(db, tenantId, to.contact_id)
    if (!contact) throw new ApiError(404, 'contact_not_found', `No contact ${to.contact_id}`)
    refuseOtherAddress(contact, to)
    if (contact.channel !== account.channel) {
      throw new ApiError(
        422,
        'contact_channel_mismatch',
        `Contact ${contact.id} is on the ${contact.channel} channel, account ${account.id} on ${account.channel}`
      )
    }
    if (contact.accountId !== account.id) {
      throw new ApiError(422, 'contact_channel_mismatch', `Contact ${contact.id} belongs to account ${contact.accountId}, not ${account.id}`)
    }
    refuseByFlags(contact)
    return existingRecipient(contact)
  }

  const address = addressFor(rules, to)
  const id = await contactIdFor(tenantId, account.id, address)
  // alpha and beta key a person by their upstream id when the upstream gives one, so the number may sit on a
  // contact whose id was not derived from it.
  const existing =
    (await getContact(db, tenantId, id)) ?? (address.kind === 'phone' ? await findContactByPhone(db, tenantId, account.id, address.value) : undefined)
  if (existing) {
    refuseByFlags(existing)
    return existingRecipient(existing)
  }
  if (!rules.strangers.allowed) throw new ApiError(rules.strangers.status, rules.strangers.code, rules.strangers.message)
  return {
    id,
    tenantId,
    accountId: account.id,
    channel: account.channel,
    phone: address.kind === 'phone' ? address.value : null,
    externalId: address.kind === 'external' ? address.value : null,
    socialId: address.kind === 'social' ? address.value : null,
    hasInbound: false,
    known: false,
    lastInboundAt: null,
  }
}
