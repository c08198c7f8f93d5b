/** Helpers for the webhook tests: subscriptions through the API, the delivery log, and the account's Durable Object. */
import { env } from 'cloudflare:workers'
import { expect } from 'vitest'
import { body, call, type TestTenant } from './helpers'

export type WireWebhook = {
  id: string
  name: string
  url: string
  subscribed_to: string[]
  enabled: boolean
  retries_enabled: boolean
  signing_enabled: boolean
  signing_secret_created_at: string | null
  created_at: string
}

export type WireDelivery = {
  delivery_id: string
  event: string
  event_id: string
  status: string
  attempts: number
  last_status_code: number | null
  last_failure_type: string | null
  last_error: string | null
  next_attempt_at: string | null
  created_at: string
}

export type WireHealth = {
  consecutive_failures: number
  total_failures: number
  total_successes: number
  is_disabled: boolean
  disabled_at: string | null
  disabled_reason: string | null
  last_failure: { timestamp: string | null; status_code: number | null; failure_type: string; error_message: string } | null
  last_success_at: string | null
  created_at: string | null
  updated_at: string | null
}

export async function api<T = Record<string, unknown>>(t: TestTenant, method: string, path: string, json?: unknown) {
  const res = await call(`/v1${path}`, { method, key: t.key, json })
  return { status: res.status, body: await body<T>(res) }
}

export async function createWebhook(t: TestTenant, json: Record<string, unknown>) {
  const res = await api<{ webhook: WireWebhook; signing_secret: string | null }>(t, 'POST', '/webhooks', json)
  if (res.status !== 201) throw new Error(`create webhook failed: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}

export async function deliveries(t: TestTenant, webhookId: string): Promise<WireDelivery[]> {
  const res = await api<{ deliveries: WireDelivery[] }>(t, 'GET', `/webhooks/${encodeURIComponent(webhookId)}/deliveries?limit=100`)
  if (res.status !== 200) throw new Error(`deliveries failed: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.deliveries
}

export async function health(t: TestTenant, webhookId: string): Promise<WireHealth | null> {
  return (await api<{ health: WireHealth | null }>(t, 'GET', `/webhooks/${encodeURIComponent(webhookId)}/health`)).body.health
}

/** Polls (real time, never the faked clock) until `check` returns a value, or fails after `tries`. */
export async function until<T>(check: () => Promise<T | undefined | false>, what: string, tries = 200): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await check()
    if (v !== undefined && v !== false) return v
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`timed out waiting for ${what}`)
}

/** A row whose latest attempt is recorded: final, or pending a retry after a recorded failure. */
export const isSettled = (d: WireDelivery) => d.status !== 'pending' || d.last_failure_type !== null

/** Waits until the log of `webhookId` has `count` rows and none of them has an attempt in flight. */
export async function settledLog(t: TestTenant, webhookId: string, count: number, done = isSettled) {
  return until(async () => {
    const log = await deliveries(t, webhookId)
    return log.length >= count && log.every(done) ? log : undefined
  }, `${count} settled deliveries on ${webhookId}`)
}

export function accountObject(t: TestTenant, accountId = 'custom') {
  return env.ACCOUNT.getByName(`${t.tenantId}/${accountId}`)
}

/** What `POST /v1/webhooks/{webhookId}/test` (and MCP's test_webhook) answers when the receiver took the sample. */
export const TEST_DELIVERED = {
  success: true,
  webhook_id: '0',
  event: 'message.delivered',
  delivery_id: expect.stringMatching(/^dlv_test_/),
  delivered: true,
  status_code: 200,
  duration_ms: expect.any(Number),
  failure_type: null,
  error_message: null,
}

/** An account event's payload for a tenant's custom channel (its identifier is the caller's address in tests). */
export function customAccountEvent(event: string, createdAt: unknown, status: string, reason: string | null) {
  return {
    event,
    created_at: createdAt,
    account_id: 'custom',
    channel: 'custom',
    account: { id: 'custom', channel: 'custom', identifier: '127.0.0.1', status, reason },
  }
}
