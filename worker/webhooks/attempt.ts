/**
 * One delivery attempt from the AccountDO: POST the stored payload, then record the outcome on the delivery row
 * and the URL's health in one D1 batch. Answers when the next retry is due (null when none follows).
 */
import { deliveryTimeoutMs, encryptionKey, urlPolicy } from '../config'
import type { Db } from '../db/client'
import { finishAttempt } from '../db/webhook-deliveries'
import { recordFailure, recordSuccess } from '../db/webhook-health'
import type { WebhookRow } from '../db/webhooks'
import { unseal } from '../lib/crypto'
import type { EventType } from '../../schema/events'
import { nextAttemptAt, type AttemptOutcome } from './policy'
import { postWebhook } from './post'

export type AttemptTarget = {
  deliveryId: string
  /** This attempt's number (X-Webhook-Attempt), already claimed on the row. */
  attempt: number
  /** Attempts made before the current cycle; the retry step is attempt - cycleStart. */
  cycleStart: number
  webhook: WebhookRow
  eventType: EventType
  payload: string
}

export async function unsealSecret(env: Env, sealed: string | null): Promise<string | null> {
  return sealed === null ? null : unseal(encryptionKey(env), sealed)
}

export async function runAttempt(env: Env, db: Db, t: AttemptTarget): Promise<number | null> {
  let outcome: AttemptOutcome
  try {
    outcome = await postWebhook({
      url: t.webhook.url,
      body: t.payload,
      event: t.eventType,
      deliveryId: t.deliveryId,
      attempt: t.attempt,
      secret: await unsealSecret(env, t.webhook.signingSecret),
      timeoutMs: deliveryTimeoutMs(env),
      policy: urlPolicy(env),
    })
  } catch (err) {
    outcome = { ok: false, statusCode: null, failureType: 'unknown', message: `delivery failed: ${err instanceof Error ? err.message : String(err)}`, durationMs: 0 }
  }
  const now = Date.now()
  const { tenantId, url } = t.webhook
  if (outcome.ok) {
    await db.batch([
      finishAttempt(db, t.deliveryId, t.attempt, { status: 'delivered', statusCode: outcome.statusCode }, now),
      recordSuccess(db, tenantId, url, now),
    ])
    return null
  }
  const next = nextAttemptAt(t.attempt - t.cycleStart, outcome, t.webhook.retriesEnabled, now)
  await db.batch([
    finishAttempt(
      db,
      t.deliveryId,
      t.attempt,
      { status: next === null ? 'failed' : 'pending', statusCode: outcome.statusCode, failureType: outcome.failureType, error: outcome.message, nextAttemptAt: next },
      now
    ),
    recordFailure(db, tenantId, url, { statusCode: outcome.statusCode, failureType: outcome.failureType, message: outcome.message, gone: outcome.gone ?? false }, now),
  ])
  return next
}
