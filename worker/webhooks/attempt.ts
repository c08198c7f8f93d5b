/**
 * One delivery attempt from the AccountDO: POST the stored payload, then build the statements recording the
 * outcome on the delivery row and on the URL's health (written together, atomically, by the caller), and when
 * the next retry is due (null when none follows).
 */
import { mediaSigner, signPayload } from '../media/links-for'
import { deliveryTimeoutMs, urlPolicy } from '../config'
import type { BatchItem } from 'drizzle-orm/batch'
import type { Db } from '../db/client'
import { finishAttempt } from '../db/webhook-deliveries'
import { recordFailure, recordSuccess } from '../db/webhook-health'
import type { WebhookRow } from '../db/webhooks'
import type { EventType } from '../../schema/events'
import { nextAttemptAt, PAUSE_AFTER_CONSECUTIVE_FAILURES, PAUSE_MIN_FAILING_MS, type AttemptOutcome } from './policy'

const PAUSE_RULE = { afterConsecutiveFailures: PAUSE_AFTER_CONSECUTIVE_FAILURES, minFailingMs: PAUSE_MIN_FAILING_MS }
import { postWebhook, type McpEnvelope } from './post'
import { deliveryWatermark } from '../db/event-feed'
import { encodeCursor } from '../lib/cursor'
import { mcpSubscriptionId } from './subscriptions'
import { unsealSecret } from './secret'

export type AttemptTarget = {
  deliveryId: string
  /** When the event happened (an MCP delivery's `timestamp`). */
  eventAt: number
  /** This attempt's number (X-Webhook-Attempt), already claimed on the row. */
  attempt: number
  /** Attempts made before the current cycle; the retry step is attempt - cycleStart. */
  cycleStart: number
  webhook: WebhookRow
  eventId: string
  eventType: EventType
  payload: string
}

export type AttemptRecord = { statements: BatchItem<'sqlite'>[]; nextAttemptAt: number | null }

/** An MCP subscription's delivery carries its subscription id and the watermark cursor at the time of the attempt. */
async function mcpEnvelope(db: Db, t: AttemptTarget, placement: number): Promise<McpEnvelope> {
  const watermark = await deliveryWatermark(db, t.webhook.tenantId, t.webhook.id, t.eventId)
  return { subscriptionId: mcpSubscriptionId(t.webhook.id), occurredAt: t.eventAt, cursor: encodeCursor('event', watermark, placement) }
}

/** One attempt; `placement` is the tenant's, which an MCP delivery's cursor counts in. */
export async function runAttempt(env: Env, db: Db, t: AttemptTarget, placement: number): Promise<AttemptRecord> {
  let outcome: AttemptOutcome
  try {
    outcome = await postWebhook({
      url: t.webhook.url,
      body: await signPayload(mediaSigner(env, t.webhook.tenantId, Date.now()), t.payload),
      event: t.eventType,
      eventId: t.eventId,
      deliveryId: t.deliveryId,
      attempt: t.attempt,
      secret: await unsealSecret(env, t.webhook),
      timeoutMs: deliveryTimeoutMs(env),
      policy: urlPolicy(env),
      mcp: t.webhook.origin === 'mcp' ? await mcpEnvelope(db, t, placement) : undefined,
    })
  } catch (err) {
    outcome = {
      ok: false,
      statusCode: null,
      failureType: 'unknown',
      message: `delivery failed: ${err instanceof Error ? err.message : String(err)}`,
      durationMs: 0,
    }
  }
  const now = Date.now()
  const { tenantId, url } = t.webhook
  if (outcome.ok) {
    return {
      statements: [
        finishAttempt(db, t.deliveryId, t.attempt, { status: 'delivered', statusCode: outcome.statusCode }, now),
        recordSuccess(db, tenantId, url, now),
      ],
      nextAttemptAt: null,
    }
  }
  const next = nextAttemptAt(t.attempt - t.cycleStart, outcome, t.webhook.retriesEnabled, now)
  const statements = [
    finishAttempt(
      db,
      t.deliveryId,
      t.attempt,
      {
        status: next === null ? 'failed' : 'pending',
        statusCode: outcome.statusCode,
        failureType: outcome.failureType,
        error: outcome.message,
        nextAttemptAt: next,
      },
      now
    ),
    recordFailure(
      db,
      tenantId,
      url,
      { statusCode: outcome.statusCode, failureType: outcome.failureType, message: outcome.message, gone: outcome.gone ?? false, pause: PAUSE_RULE },
      now
    ),
  ]
  return { statements, nextAttemptAt: next }
}
