/** Converts stored subscription, health and delivery rows into the wire shapes of schema/api/webhooks.ts. */
import type { z } from 'zod'
import type { WebhookDelivery, WebhookHealth, WebhookSubscription } from '../../schema/api/webhooks'
import { SUBSCRIBABLE_EVENTS, type EventType } from '../../schema/events'
import type { DeliveryRow } from '../db/webhook-deliveries'
import type { HealthRow } from '../db/webhook-health'
import type { WebhookRow } from '../db/webhooks'
import { iso, isoOrNull } from '../lib/time'

/** The stored event list, narrowed to the names that still exist. */
export function subscribedTo(row: Pick<WebhookRow, 'subscribedTo'>): EventType[] {
  const parsed: unknown = JSON.parse(row.subscribedTo)
  return Array.isArray(parsed) ? SUBSCRIBABLE_EVENTS.filter((e) => parsed.includes(e)) : []
}

export function toWireWebhook(row: WebhookRow, position: number): z.infer<typeof WebhookSubscription> {
  return {
    id: String(position),
    name: row.name,
    url: row.url,
    subscribed_to: subscribedTo(row),
    created_at: iso(row.createdAt),
    enabled: row.enabled,
    retries_enabled: row.retriesEnabled,
    signing_enabled: row.signingSecret !== null,
    signing_secret_created_at: row.signingSecret !== null ? isoOrNull(row.signingSecretCreatedAt) : null,
    // Spec 2's shape for the subscriptions of this API; only an MCP subscription names its origin and expiry.
    ...(row.origin === 'mcp' ? { origin: row.origin, expires_at: isoOrNull(row.expiresAt) } : {}),
  }
}

export function toWireHealth(h: HealthRow | undefined): z.infer<typeof WebhookHealth> | null {
  if (!h) return null
  return {
    consecutive_failures: h.consecutiveFailures,
    total_failures: h.totalFailures,
    total_successes: h.totalSuccesses,
    is_disabled: h.isDisabled,
    disabled_at: isoOrNull(h.disabledAt),
    disabled_reason: h.disabledReason,
    last_failure:
      h.lastFailureType !== null
        ? {
            timestamp: isoOrNull(h.lastFailureAt),
            status_code: h.lastFailureStatus,
            failure_type: h.lastFailureType,
            error_message: h.lastFailureMessage ?? '',
          }
        : null,
    last_success_at: isoOrNull(h.lastSuccessAt),
    created_at: iso(h.createdAt),
    updated_at: iso(h.updatedAt),
  }
}

export function toWireDelivery(r: DeliveryRow): z.infer<typeof WebhookDelivery> {
  return {
    delivery_id: r.id,
    event: r.eventType,
    event_id: r.eventId,
    status: r.status,
    attempts: r.attempts,
    last_attempt_at: isoOrNull(r.lastAttemptAt),
    last_status_code: r.lastStatusCode,
    last_failure_type: r.lastFailureType,
    last_error: r.lastError,
    next_attempt_at: r.status === 'pending' ? isoOrNull(r.nextAttemptAt) : null,
    delivered_at: isoOrNull(r.deliveredAt),
    created_at: iso(r.createdAt),
  }
}
