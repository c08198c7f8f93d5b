/**
 * Delivery reports for SMS (Twilio status callbacks, the phone's sms:sent/delivered/failed), matched by our message
 * id. A message only moves forward: sent → delivered → read, or to failed before it was delivered; a late or
 * repeated report changes nothing. The move and its `message.*` event are one batch, the event conditional on the
 * move still being possible, so a report applied twice emits one event.
 */
import { and, eq, inArray } from 'drizzle-orm'
import { messages, type MessageStatus } from '../../../schema/d1'
import type { Db } from '../../db/client'
import { insertEventIfMessage } from '../../db/events'
import { getMessage, updateMessageStatus, type MessageWithContact } from '../../db/messages'
import { messageEventFromRow } from '../../events/payloads'
import { commitEvents } from '../../webhooks/emit'
import { accountStub } from '../../lib/objects'

export type SmsReport = { status: 'sent' | 'delivered' | 'read' } | { status: 'failed'; code: number | null; error: string }

/** The statuses each report may move a message from. */
export const REPORT_FROM: Record<SmsReport['status'], MessageStatus[]> = {
  sent: ['queued'],
  delivered: ['queued', 'sent'],
  read: ['queued', 'sent', 'delivered'],
  failed: ['queued', 'sent'],
}

/**
 * Twilio's MessageStatus → our report. queued/accepted/scheduled/sending say nothing new (the message is already
 * sent once Twilio took it); undelivered and failed both fail it; canceled fails it as well.
 */
export function twilioReport(status: string, errorCode: number | null): SmsReport | null {
  switch (status) {
    case 'sent':
      return { status: 'sent' }
    case 'delivered':
      return { status: 'delivered' }
    case 'read':
      return { status: 'read' }
    case 'failed':
    case 'undelivered':
    case 'canceled':
      return { status: 'failed', code: errorCode, error: `Twilio reported the message ${status}${errorCode !== null ? ` (error ${errorCode})` : ''}` }
    default:
      return null
  }
}

export type ReportOutcome = 'applied' | 'unchanged' | 'unknown_message'

/** Twilio's "Message filtered" (carrier spam filtering): a ban-risk signal for the number (issue 25). */
export const TWILIO_CARRIER_FILTERED = 30007

/** A failure the carrier filtered as spam is reported to the account as `carrier_filtering` (new contacts pause for a day). */
export async function reportCarrierFiltering(env: Env, tenantId: string, accountId: string, report: SmsReport): Promise<void> {
  if (report.status !== 'failed' || report.code !== TWILIO_CARRIER_FILTERED) return
  await accountStub(env, tenantId, accountId).riskReport(
    { tenantId, accountId, channel: 'sms' },
    { signal: 'carrier_filtering', active: true, until: null, detail: report.error }
  )
}

export async function applySmsReport(
  env: Env,
  db: Db,
  tenantId: string,
  accountId: string,
  messageId: string,
  report: SmsReport,
  now: number
): Promise<ReportOutcome> {
  const row = await getMessage(db, tenantId, messageId)
  if (!row || row.message.accountId !== accountId || row.message.direction !== 'outbound') return 'unknown_message'
  const from = REPORT_FROM[report.status]
  if (!from.includes(row.message.status)) return 'unchanged'
  const change = report.status === 'failed' ? { status: report.status, errorCode: report.code, errorMessage: report.error } : { status: report.status }
  const moved: MessageWithContact = { ...row, message: { ...row.message, ...change, updatedAt: now } }
  const movable = and(eq(messages.id, messageId), inArray(messages.status, from))!
  await commitEvents(env, db, [
    insertEventIfMessage(db, tenantId, accountId, messageEventFromRow(`message.${report.status}`, moved, 'sms', now), now, movable),
    updateMessageStatus(db, change, now, movable),
  ])
  return 'applied'
}
