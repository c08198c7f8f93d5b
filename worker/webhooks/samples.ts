/**
 * Sample payloads for POST /webhooks/{webhookId}/test: the exact shape of the chosen event (spec 6), filled with
 * the tenant's first account when it has one so a receiver that looks the account up finds it. Ids start with
 * `test_` and the request carries `X-Webhook-Test: true`.
 */
import type { EventPayload, EventType } from '../../schema/events'
import type { AccountRow } from '../db/accounts'
import { accountEventPayload, limitReachedPayload, messageEventPayload, riskEventPayload } from '../events/payloads'

const ACCOUNT_REASONS: Record<string, string | null> = {
  'account.connected': null,
  'account.disconnected': 'logged_out',
  'account.restricted': 'blocked_by_alpha',
}

/** The status a sample of each message event carries, as the real event does (schema/events.ts). */
const SAMPLE_STATUS = {
  'message.received': 'received',
  'message.sent': 'sent',
  'message.delivered': 'delivered',
  'message.read': 'read',
  'message.failed': 'failed',
  'message.approval_required': 'awaiting_approval',
} as const

export function samplePayload(event: EventType, account: AccountRow | undefined, now: number): EventPayload {
  const acc = account ?? { id: 'test_account', channel: 'custom' as const, identifier: 'test', status: 'connected' as const }
  switch (event) {
    case 'account.limit_reached':
      return limitReachedPayload('daily_send_cap', now)
    case 'account.at_risk':
      return riskEventPayload({ ...acc, status: acc.status === 'restricted' ? 'restricted' : 'connected' }, { signal: 'flood_wait', until: now + 60_000 }, now)
    case 'account.connected':
    case 'account.disconnected':
    case 'account.restricted': {
      const status = event === 'account.connected' ? 'connected' : event === 'account.disconnected' ? 'disconnected' : 'restricted'
      return accountEventPayload(event, { ...acc, status }, ACCOUNT_REASONS[event] ?? null, now)
    }
    case 'message.reaction':
      return {
        ...messageEventPayload(
          event,
          {
            id: 'test_message',
            accountId: acc.id,
            direction: 'outbound',
            text: 'This is a test event from the messaging gateway.',
            mediaUrl: null,
            mediaContentType: null,
            status: 'read',
            errorMessage: null,
          },
          { id: 'test_contact', phone: null, name: 'Test Contact' },
          acc.channel,
          now
        ),
        reaction: { emoji: '👍', from: 'test_contact', at: new Date(now).toISOString() },
      }
    default: {
      const inbound = event === 'message.received'
      const status = SAMPLE_STATUS[event]
      return messageEventPayload(
        event,
        {
          id: 'test_message',
          accountId: acc.id,
          direction: inbound ? 'inbound' : 'outbound',
          text: 'This is a test event from the messaging gateway.',
          mediaUrl: null,
          mediaContentType: null,
          status,
          errorMessage: event === 'message.failed' ? 'test failure: the recipient could not be reached' : null,
        },
        { id: 'test_contact', phone: null, name: 'Test Contact' },
        acc.channel,
        now
      )
    }
  }
}
