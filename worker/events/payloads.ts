/** Builds the exact webhook payloads of spec part 6. */
import type { AccountEvent, AccountEventType, MessageEvent, MessageEventType } from '../../schema/events'
import type { AccountRow } from '../db/accounts'
import type { MessageRow, MessageWithContact } from '../db/messages'
import { iso } from '../lib/time'
import { toWireContact, type WireContact } from '../db/wire'
import { wireMedia, type MediaFacts } from '../db/wire-media'

type MessageFacts = Pick<MessageRow, 'id' | 'accountId' | 'direction' | 'text' | 'status' | 'errorMessage'> &
  Partial<MediaFacts> &
  Pick<MessageRow, 'mediaUrl' | 'mediaContentType'>

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
