/**
 * GET /v1/usage (spec 4.1 and 2): today's sends and new contacts against the caps, suspension state, account counts,
 * and (an extension) what is kept how long. Caps apply per account (see plans.ts); the figures here are the tenant's sums.
 */
import { createRoute } from '@hono/zod-openapi'
import { Usage } from '../../schema/api/accounts'
import { MessagingError } from '../../schema/api/common'
import { mediaConfig } from '../config'
import { retentionDays } from '../db/message-retention'
import { AUDIT_RETENTION_DAYS } from '../safety/audit-note'
import { RETENTION_MS as WEBHOOK_LOG_RETENTION_MS } from '../webhooks/policy'
import { DAY_MS, utcDay } from '../lib/time'
import { accountsWithLimits } from '../messaging/account-view'
import { planOf } from '../plans'
import { accountAllowed } from '../safety/grant'
import { resourceApp } from '../validate'

export const usageRoutes = resourceApp()

usageRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/',
    operationId: 'get_usage',
    tags: ['Accounts'],
    summary: 'Get usage',
    description: [
      "Today's (UTC) sends and new contacts against the plan caps, the account count, and whether sending is suspended; check it before a series of sends.",
      'Sends and new contacts of the current UTC day against the plan caps, summed over your accounts (each account has its own caps; a key limited to some accounts sees theirs). `status` is `suspended` after an opener burst until the service reviews it. `retention` (an extension) says how long messages, media, audit entries and webhook logs are kept for you; messages past theirs are archived (GET /messages/archive) and deleted. `risk` (an extension) lists the accounts a network warned (ban-risk signals, docs/api.md): new contacts pause on them while it lasts.',
    ].join('\n\n'),
    responses: {
      200: { description: 'Usage of the current UTC day', content: { 'application/json': { schema: Usage } } },
      401: { description: 'Missing or invalid API key', content: { 'application/json': { schema: MessagingError } } },
    },
  }),
  async (c) => {
    const { tenant, accounts: all } = await accountsWithLimits(c.env, c.var.db, c.get('tenant'))
    // A key limited to some accounts sees their usage only (docs/agent-safety.md).
    const grant = c.get('key')
    const accounts = all.filter((a) => accountAllowed(grant, a.id))
    const plan = planOf(tenant.plan)
    const sum = (f: (a: (typeof accounts)[number]) => number) => accounts.reduce((n, a) => n + f(a), 0)
    return c.json(
      {
        plan: plan.name,
        label: plan.label,
        day: utcDay(Date.now()),
        sends: sum((a) => a.limits.sends_today),
        sends_cap: accounts.length ? sum((a) => a.limits.sends_cap) : plan.sendsPerDay,
        new_contacts: sum((a) => a.limits.new_contacts_today),
        new_contacts_cap: accounts.length ? sum((a) => a.limits.new_contacts_cap) : plan.newContactsPerDay,
        status: tenant.status,
        suspended_reason: tenant.suspendedReason,
        accounts_total: accounts.length,
        accounts_connected: accounts.filter((a) => a.status === 'connected').length,
        accounts_cap: plan.accountsCap,
        retention: {
          messages_days: retentionDays(tenant.messageRetentionDays),
          media_days: Math.round(mediaConfig(c.env).retentionMs / DAY_MS),
          audit_days: AUDIT_RETENTION_DAYS,
          webhook_log_days: WEBHOOK_LOG_RETENTION_MS / DAY_MS,
        },
        risk: {
          at_risk: accounts.some((a) => a.risk.at_risk),
          accounts: accounts.filter((a) => a.risk.at_risk).map((a) => ({ account_id: a.id, channel: a.channel, signals: a.risk.signals })),
        },
      },
      200
    )
  }
)
