/** Account and usage shapes (spec 2 and 4.1). */
import { z } from 'zod'
import { ACCOUNT_STATUSES, CHANNELS } from '../d1'
import { RISK_SIGNALS } from '../frames'
import { DateTime } from './common'

export const AccountLimits = z
  .object({
    sends_today: z.number().int(),
    sends_cap: z.number().int(),
    new_contacts_today: z.number().int(),
    new_contacts_cap: z.number().int().meta({ description: "Today's new-contact allowance (lower than the plan cap on an alpha number's warm-up days)" }),
    ramp_day: z.number().int().nullable().meta({ description: 'Warm-up day of an alpha number (1 = first active day); null for channels without a ramp' }),
  })
  .meta({ id: 'AccountLimits' })

/** A ban-risk signal in force on an account (issue 25, docs/api.md "Ban-risk signals"). */
export const RiskSignal = z
  .object({
    signal: z.enum(RISK_SIGNALS).meta({ description: 'What the network (or the provider) reported' }),
    since: DateTime,
    until: DateTime.nullable().meta({ description: 'When it ends, if the network said; null: until the network lifts it' }),
    advice: z.string().meta({ description: 'What to do meanwhile, in one sentence' }),
  })
  .meta({ id: 'RiskSignal' })

export const AccountRisk = z
  .object({
    at_risk: z.boolean().meta({ description: 'true while a signal is in force; new contacts are then paused (0 today) and replies still go out' }),
    signals: z.array(RiskSignal),
  })
  .meta({ id: 'AccountRisk' })

export const Account = z
  .object({
    id: z.string().meta({ description: 'The E.164 number for alpha_web; `custom` for the custom channel' }),
    channel: z.enum(CHANNELS),
    identifier: z.string(),
    status: z.enum(ACCOUNT_STATUSES),
    status_reason: z.string().nullable().meta({ description: 'Why the account is disconnected or restricted (logged_out, blocked_by_alpha, opener_burst, …)' }),
    connected_at: DateTime.nullable().meta({
      description: 'When the account became connected; null in every other status (connecting, disconnected, restricted)',
    }),
    limits: AccountLimits,
    risk: AccountRisk.optional().meta({
      description: 'Extension: ban-risk signals the network gave this account, and whether the gateway tightened its limits for them',
    }),
  })
  .meta({ id: 'WireAccount' })

export const AccountList = z.object({ accounts: z.array(Account) }).meta({ id: 'AccountList' })

/** What is kept how long for this tenant (extension: not in spec 2's Usage; docs/api.md, "Retention and archive"). */
export const Retention = z
  .object({
    messages_days: z.number().int().meta({
      description: 'Days messages (and contacts only they referred to) are kept, then archived to `GET /messages/archive` and deleted; 0 = kept forever',
    }),
    media_days: z.number().int().meta({ description: 'Days the bytes of received media are kept (deleted with their message if that goes first)' }),
    audit_days: z.number().int().meta({ description: 'Days audit log entries are kept' }),
    webhook_log_days: z.number().int().meta({ description: 'Days events and webhook delivery logs are kept (the replay window)' }),
  })
  .meta({ id: 'Retention' })

export const Usage = z
  .object({
    plan: z.string(),
    label: z.string().meta({ description: 'Plan label, marked early access' }),
    day: z.string().meta({ description: 'The current UTC day, YYYY-MM-DD', example: '2026-11-21' }),
    sends: z.number().int(),
    sends_cap: z.number().int(),
    new_contacts: z.number().int(),
    new_contacts_cap: z.number().int(),
    status: z.enum(['active', 'suspended']).meta({ description: 'suspended: outbound is refused until the service reviews it' }),
    suspended_reason: z.string().nullable(),
    accounts_total: z.number().int().meta({ description: 'Accounts added, whatever their status (a disconnected one counts until it is removed)' }),
    accounts_connected: z.number().int(),
    accounts_cap: z.number().int().meta({
      description:
        'Accounts that may hold a place at once: connected, connecting or restricted ones do; a disconnected account does not block connecting another',
    }),
    retention: Retention.optional(),
    risk: z
      .object({
        at_risk: z.boolean().meta({ description: 'true when any of your accounts has a signal in force' }),
        accounts: z.array(z.object({ account_id: z.string(), channel: z.enum(CHANNELS), signals: z.array(RiskSignal) })).meta({
          description: 'The accounts with a signal in force',
        }),
      })
      .optional()
      .meta({ description: 'Extension: ban-risk signals in force on your accounts (GET /accounts shows them per account)' }),
  })
  .meta({ id: 'Usage' })
