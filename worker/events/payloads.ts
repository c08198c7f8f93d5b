/** Builds the exact webhook payloads of spec part 6. */
import type { AccountEvent, AccountEventType, MessageEvent, MessageEventType } from '../../schema/events'
import type { RiskSignalName } from '../../schema/frames'
import type { AccountRow } from '../db/accounts'
import type { MessageRow, MessageWithContact } from '../db/messages'
import { iso } from '../lib/time'
import { RISK_ADVICE } from './risk-advice'
import { toWireContact, type WireContact } from '../db/wire'
import { wireMedia, type MediaFacts } from '../db/wire-media'

type MessageFacts = Pick<MessageRow, 'id' | 'accountId' | 'direction' | 'text' | 'status' | 'errorMessage'> &
  Partial<MediaFacts> &
  Pick<MessageRow, 'mediaUrl' | 'mediaContentType'> &
  Partial<Pick<MessageRow, 'replyTo'>>

export function messageEventPayload(
  type: MessageEventType,
  m: MessageFacts,
  contact: Pick<WireContact, 'id' | 'phone' | 'name' | 'username'>,
  channel: string,
  now: number
): MessageEvent {
  return {
    event: type,
    created_at: iso(now),
    account_id: m.accountId,
    channel,
    message: {
      id: m.id,
      direction: m.direction,
      text: m.text,
      media: wireMedia({ mediaId: null, mediaKind: null, mediaSize: null, mediaFileName: null, mediaError: null, mediaStatus: null, ...m }),
      status: m.status,
      error: m.errorMessage,
      // Present only on a reply (issue 25), so the spec's payload is unchanged for every other message.
      ...(m.replyTo ? { reply_to: m.replyTo } : {}),
    },
    contact: { id: contact.id, phone: contact.phone, name: contact.name, ...(contact.username === undefined ? {} : { username: contact.username }) },
  }
}

export function messageEventFromRow(type: MessageEventType, row: MessageWithContact, channel: string, now: number): MessageEvent {
  return messageEventPayload(type, row.message, toWireContact(row.contact, row.message.contactId), channel, now)
}

type AccountFacts = Pick<AccountRow, 'id' | 'channel' | 'identifier' | 'status'>

export function accountEventPayload(type: AccountEventType, account: AccountFacts, reason: string | null, now: number): AccountEvent {
  return {
    event: type,
    created_at: iso(now),
    account_id: account.id,
    channel: account.channel,
    account: { id: account.id, channel: account.channel, identifier: account.identifier, status: account.status, reason },
  }
}

/** account.limit_reached hides which account hit the limit (spec part 6): ids are null and the status is `limited`. */
export function limitReachedPayload(reason: string, now: number): AccountEvent {
  return {
    event: 'account.limit_reached',
    created_at: iso(now),
    account_id: null,
    channel: null,
    account: { id: null, channel: null, identifier: null, status: 'limited', reason },
  }
}

/** `message.reaction` (issue 25): the message reacted to, the person, and their reaction (`emoji` null: taken back). */
export function reactionEventPayload(
  row: MessageWithContact,
  channel: string,
  reaction: { emoji: string | null; from: string; at: number },
  now: number
): MessageEvent {
  return { ...messageEventFromRow('message.reaction', row, channel, now), reaction: { emoji: reaction.emoji, from: reaction.from, at: iso(reaction.at) } }
}

/** `account.at_risk` (issue 25): the account event with the signal, its end and the advice at the top level. */
export function riskEventPayload(account: AccountFacts, risk: { signal: RiskSignalName; until: number | null }, now: number): AccountEvent {
  return {
    ...accountEventPayload('account.at_risk', account, risk.signal, now),
    signal: risk.signal,
    until: risk.until === null ? null : iso(risk.until),
    advice: RISK_ADVICE[risk.signal],
  }
}
