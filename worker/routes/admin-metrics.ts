/**
 * GET /admin/metrics: what the edge knows, in Prometheus text (docs/admin.md "Metrics"), for the operator's scraper
 * with the admin token. Each figure comes from a counter or a small table, never from scanning messages:
 *   accounts by channel and status   one aggregate over `accounts` (a row per account)
 *   messages in / out, limit hits    each account's tallies in its own Durable Object (account/totals.ts), one RPC per
 *                                    account per scrape, ACCOUNT_CALLS_AT_ONCE at a time; nothing is written per message
 *                                    beyond what the object already writes
 *   webhook backlog and failures     the partial index of pending deliveries and the per-URL health rows
 *   shards                           each shard's size from D1's own meta, its tenants, and the alarm level
 * Every figure but the shards' is summed over the shards; a shard that does not answer fails the scrape (its figures
 * would silently drop otherwise).
 */
import { allAccounts, webhookFigures, type AccountSample, type WebhookFigures } from '../db/edge-metrics'
import { shardStats } from '../db/shard-stats'
import { shardCount, shardDb } from '../db/shards'
import { accountStub } from '../lib/objects'
import { exposition, PROMETHEUS_CONTENT_TYPE, type Family, type Sample } from '../lib/prometheus'
import { resourceApp } from '../validate'

/** Durable Object calls in flight at once while a scrape gathers the accounts' tallies. */
export const ACCOUNT_CALLS_AT_ONCE = 8

export const adminMetricsRoutes = resourceApp()

type Tallies = { inbound: number; outbound: number; refused: Record<string, number> }

async function talliesOf(env: Env, list: AccountSample[]): Promise<Array<{ account: AccountSample; totals: Tallies | null }>> {
  const out: Array<{ account: AccountSample; totals: Tallies | null }> = []
  for (let i = 0; i < list.length; i += ACCOUNT_CALLS_AT_ONCE) {
    const slice = list.slice(i, i + ACCOUNT_CALLS_AT_ONCE)
    const got = await Promise.all(
      slice.map((account) =>
        accountStub(env, account.tenantId, account.id)
          .totals()
          .then((totals): Tallies => totals)
          .catch(() => null)
      )
    )
    for (const [n, account] of slice.entries()) out.push({ account, totals: got[n] ?? null })
  }
  return out
}

/** Sums values into samples keyed by their labels. */
function summed(): { add(labels: Record<string, string>, value: number): void; samples(): Sample[] } {
  const byKey = new Map<string, Sample>()
  return {
    add(labels, value) {
      const key = JSON.stringify(labels)
      const s = byKey.get(key)
      if (s) s.value += value
      else byKey.set(key, { labels, value })
    },
    samples: () => [...byKey.values()],
  }
}

/** Sums each shard's webhook figures. */
function addFigures(all: WebhookFigures[]): WebhookFigures {
  const sum = { pending: 0, overdue: 0, failures: 0, successes: 0, failingUrls: 0, pausedUrls: 0 }
  for (const f of all) for (const k of Object.keys(sum) as Array<keyof WebhookFigures>) sum[k] += f[k]
  return sum
}

const LEVELS = ['ok', 'warning', 'full', 'unreachable'] as const

adminMetricsRoutes.get('/', async (c) => {
  const now = Date.now()
  const shards = Array.from({ length: shardCount(c.env) }, (_, i) => shardDb(c.env, i))
  const [lists, figures, stats] = await Promise.all([
    Promise.all(shards.map((db) => allAccounts(db))),
    Promise.all(shards.map((db) => webhookFigures(db, now))),
    shardStats(c.env),
  ])
  const list = lists.flat()
  const hooks = addFigures(figures)
  const accounts = summed()
  for (const a of list) accounts.add({ channel: a.channel, status: a.status }, 1)
  const messages = summed()
  const refusals = summed()
  let unreadable = 0
  for (const { account, totals } of await talliesOf(c.env, list)) {
    if (!totals) {
      unreadable++
      continue
    }
    messages.add({ channel: account.channel, direction: 'inbound' }, totals.inbound)
    messages.add({ channel: account.channel, direction: 'outbound' }, totals.outbound)
    for (const [code, n] of Object.entries(totals.refused)) refusals.add({ channel: account.channel, code }, n)
  }
  const families: Family[] = [
    { name: 'gateway_accounts', type: 'gauge', help: 'Accounts by channel and status.', samples: accounts.samples() },
    {
      name: 'gateway_messages_total',
      type: 'counter',
      help: 'Messages of the accounts that exist now: inbound stored, outbound sends accepted (by channel).',
      samples: messages.samples(),
    },
    {
      name: 'gateway_limit_hits_total',
      type: 'counter',
      help: 'Sends refused by a limit or rule, by channel and code (daily_send_cap, new_contact_cap, loop_guard, opener_burst, …).',
      samples: refusals.samples(),
    },
    {
      name: 'gateway_webhook_deliveries_pending',
      type: 'gauge',
      help: 'Webhook deliveries waiting for an attempt or a retry.',
      samples: [{ value: hooks.pending }],
    },
    { name: 'gateway_webhook_deliveries_overdue', type: 'gauge', help: 'Pending webhook deliveries past their due time.', samples: [{ value: hooks.overdue }] },
    {
      name: 'gateway_webhook_attempts_total',
      type: 'counter',
      help: 'Webhook delivery attempts by outcome, over the URLs subscribed now.',
      samples: [
        { labels: { outcome: 'success' }, value: hooks.successes },
        { labels: { outcome: 'failure' }, value: hooks.failures },
      ],
    },
    { name: 'gateway_webhook_urls_failing', type: 'gauge', help: 'Webhook URLs whose last attempt failed.', samples: [{ value: hooks.failingUrls }] },
    { name: 'gateway_webhook_urls_paused', type: 'gauge', help: 'Webhook URLs paused after failing too long.', samples: [{ value: hooks.pausedUrls }] },
    {
      name: 'gateway_shard_size_bytes',
      type: 'gauge',
      help: "Each shard's D1 size (meta.size_after); shards that did not answer are left out.",
      samples: stats.flatMap((s) => (s.sizeBytes === null ? [] : [{ labels: { shard: String(s.shard) }, value: s.sizeBytes }])),
    },
    {
      name: 'gateway_shard_capacity_bytes',
      type: 'gauge',
      help: 'What one shard may hold (SHARD_CAPACITY_BYTES).',
      samples: stats.map((s) => ({ labels: { shard: String(s.shard) }, value: s.capacityBytes })),
    },
    {
      name: 'gateway_shard_tenants',
      type: 'gauge',
      help: 'Tenants placed on each shard.',
      samples: stats.map((s) => ({ labels: { shard: String(s.shard) }, value: s.tenants })),
    },
    {
      name: 'gateway_shard_level',
      type: 'gauge',
      help: "Each shard's alarm level as 1 on its label: ok, warning (past 80 % of its capacity), full (past 90 %: no new tenant, no move in) or unreachable.",
      samples: stats.flatMap((s) => LEVELS.map((level) => ({ labels: { shard: String(s.shard), level }, value: s.level === level ? 1 : 0 }))),
    },
    {
      name: 'gateway_metrics_accounts_unread',
      type: 'gauge',
      help: 'Accounts whose tallies this scrape could not read (their Durable Object did not answer).',
      samples: [{ value: unreadable }],
    },
  ]
  return c.body(exposition(families), 200, { 'Content-Type': PROMETHEUS_CONTENT_TYPE, 'Cache-Control': 'no-store' })
})
