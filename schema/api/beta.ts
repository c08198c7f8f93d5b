/** beta channel connection shapes (spec 4.4): connect, verify code, verify password, status, disconnect. */
import { z } from 'zod'
import { E164, SuccessFlag } from './common'

/** Status endpoint values (spec part 3, beta connection status). */
export const BETA_STATUSES = ['connected', 'code_required', 'password_required', 'initializing', 'disconnected', 'not_initialized', 'error'] as const
export type BetaStatus = (typeof BETA_STATUSES)[number]

export const BetaPhoneParam = z.object({
  phoneNumber: z
    .string()
    .transform((s) => (/^\d+$/.test(s) ? `+${s}` : s))
    .pipe(E164)
    .meta({ description: 'The beta account number in E.164 format, URL-encoded in paths (+ as %2B)', example: '+15551234567' }),
})

export const BetaConnectBody = z
  .object({
    phone_number: E164.meta({ description: 'The number of the beta account to log in, in E.164 format' }),
    mode: z
      .enum(['code', 'qr'])
      .default('code')
      .meta({ description: '`code`: a one-time code is sent to the beta app (then verify it); `qr`: a login QR link is returned' }),
    force_new: z.boolean().default(false).meta({ description: 'Discard any existing session and log in from scratch' }),
  })
  .meta({ id: 'BetaConnectBody' })

export const BetaConnectResult = z
  .object({
    success: SuccessFlag,
    phone_number: z.string(),
    status: z.enum(['code_required', 'qr_required', 'initializing', 'connected']).meta({
      description:
        '`initializing` while the session is still starting (no relay yet, or it has not answered); `connected` when the account was already logged in and force_new was not set',
    }),
    session_id: z.string().nullable(),
    login_token: z.string().optional().meta({ description: 'qr mode: the login token, base64url' }),
    qr_url: z.string().optional().meta({
      description: 'qr mode: the deep link to show as a QR code (`tg://login?token=…`); it is replaced about every 30 s, the hosted page does that by itself',
    }),
    connect_url: z.string().nullable().meta({
      description: 'Hosted page (no login of its own): the user enters the code and any two-step password, or scans a refreshing QR. Valid about 30 minutes',
    }),
    connect_url_expires_at: z.number().int().nullable().meta({ description: 'Unix epoch milliseconds' }),
  })
  .meta({ id: 'BetaConnectResult' })

export const BetaCodeBody = z
  .object({ code: z.string().trim().min(1).max(16).meta({ description: 'The one-time login code from the beta app' }) })
  .meta({ id: 'BetaCodeBody' })
export const BetaPasswordBody = z
  .object({ password: z.string().min(1).max(256).meta({ description: 'The two-step verification password; never stored or echoed' }) })
  .meta({ id: 'BetaPasswordBody' })

export const BetaVerifyResult = z
  .object({
    success: SuccessFlag,
    phone_number: z.string(),
    status: z.enum(['connected', 'password_required']),
    telegram_user_id: z.string().nullable().meta({ description: 'The logged-in account’s id on beta' }),
    username: z.string().nullable().meta({ description: 'The account’s public username, without @' }),
    password_hint: z.string().nullable().optional().meta({ description: 'With password_required: the hint the user set for the password' }),
  })
  .meta({ id: 'BetaVerifyResult' })

export const BetaStatusResult = z
  .object({
    success: SuccessFlag,
    phone_number: z.string(),
    status: z.enum(BETA_STATUSES),
    telegram_user_id: z.string().nullable(),
    live: z.boolean().meta({ description: 'True when the relay running the session answered just now' }),
    reason: z
      .string()
      .nullable()
      .meta({ description: 'Why it is not connected, or why sends wait (flood_wait, stranger_flag, logged_out, blocked_by_beta, relay_unavailable, …)' }),
    message: z.string().nullable(),
  })
  .meta({ id: 'BetaStatusResult' })

export const BetaRemoved = z.object({ success: SuccessFlag, phone_number: z.string(), status: z.literal('removed') }).meta({ id: 'BetaRemoved' })

/** The hosted login page's query: its signed link token (the page's only permission; no API key). */
export const BetaPageQuery = z.object({
  token: z.string().max(2048).optional().meta({ description: 'The signed token of `connect_url` (the page’s only permission; no API key)' }),
})

/** What the hosted login page polls: the login's step, the QR to show, and the link's own life. */
export const BetaPageState = z
  .object({
    status: z.enum(BETA_STATUSES).meta({ description: 'As in the status route: `code_required` and `password_required` wait for the user' }),
    reason: z.string().nullable().meta({ description: 'Why the login stopped or waits (link_expired, unknown_number, relay_unavailable, removed, …)' }),
    message: z.string().nullable(),
    mode: z.enum(['code', 'qr']).nullable().meta({ description: 'How the login was started; null when no login exists' }),
    qr_data_url: z.string().nullable().meta({ description: 'qr mode: the current login QR as a PNG data URL, null once it lapsed' }),
    qr_expires_at: z.number().int().nullable().meta({ description: 'When the current QR lapses (epoch ms); the relay replaces it before that' }),
    page_expires_at: z.number().int().meta({ description: 'When this link stops working (epoch ms)' }),
  })
  .meta({ id: 'BetaPageState' })
