/**
 * Addressing subscriptions (spec 4.8): `webhookId` is a position in the tenant's list (digits) or an exact name;
 * names can never be all digits, so the two never collide. Also the default timestamped name and the cap.
 */
import type { Db } from '../db/client'
import { listWebhooks, type WebhookRow } from '../db/webhooks'
import { ApiError } from '../errors'

/** Subscriptions per tenant: each event is POSTed once per subscription, so fan-out cost grows with this. */
export const MAX_WEBHOOKS_PER_TENANT = 20

export type Addressed = { row: WebhookRow; position: number; all: WebhookRow[] }

export function findWebhook(all: WebhookRow[], webhookId: string): Addressed | undefined {
  if (/^\d+$/.test(webhookId)) {
    const position = Number(webhookId)
    const row = all[position]
    return row ? { row, position, all } : undefined
  }
  const position = all.findIndex((w) => w.name === webhookId)
  return position >= 0 ? { row: all[position]!, position, all } : undefined
}

export async function resolveWebhook(db: Db, tenantId: string, webhookId: string): Promise<Addressed> {
  const found = findWebhook(await listWebhooks(db, tenantId), webhookId)
  if (!found) throw new ApiError(404, 'webhook_not_found', `No webhook subscription with id or name '${webhookId}'`)
  return found
}

/** `webhook-20261121-120000`, with `-2`, `-3`, … when a subscription made in the same second took it. */
export function defaultName(now: number, taken: Set<string>): string {
  const stamp = new Date(now).toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-')
  const base = `webhook-${stamp}`
  if (!taken.has(base)) return base
  for (let i = 2; ; i++) if (!taken.has(`${base}-${i}`)) return `${base}-${i}`
}

/** The SEP-3415 id of an MCP subscription (`X-MCP-Subscription-Id`): its row id, derived from the subscription key. */
export function mcpSubscriptionId(webhookId: string): string {
  return `sub_${webhookId.slice('wh_'.length)}`
}
