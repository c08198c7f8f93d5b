/** alpha channel connection shapes (spec 4.3): connect body and answer, QR, status, disconnect. */
import { z } from 'zod'
import { ACCOUNT_STATUSES } from '../d1'
import { DateTime, E164, SuccessFlag } from './common'

export const PAIRING_STATUSES = ['not_initialized', 'qr_pending', 'connecting', 'connected', 'open', 'disconnected'] as const

export const AlphaConnectBody = z
  .object({
    phone_number: E164.meta({ description: 'The number to link, in E.164 format' }),
    link_method: z
      .enum(['qr', 'pairing_code'])
      .default('qr')
      .meta({ description: '`pairing_code`: the answer carries an 8-character code to type on the phone (Linked devices → Link with phone number)' }),
    force_new: z.boolean().default(false).meta({ description: 'Discard any stored session and link from scratch' }),
    import_contacts: z.boolean().default(false).meta({ description: "Import the phone's contacts as contacts of this account" }),
    pause_ai_for_imported_contacts: z.boolean().default(true).meta({ description: 'Imported contacts are marked `ai_paused`' }),
    import_existing_chats: z
      .boolean()
      .default(false)
      .meta({ description: 'People you already have a chat with count as people who wrote first (requires import_contacts)' }),
    mark_imported_contacts_as_private: z
      .boolean()
      .default(false)
      .meta({ description: 'Imported contacts are private: no messages to or from them are stored or sent (incompatible with import_existing_chats)' }),
  })
  .superRefine((b, ctx) => {
    if (b.import_existing_chats && !b.import_contacts) {
      ctx.addIssue({ code: 'custom', path: ['import_existing_chats'], message: 'requires import_contacts: true' })
    }
    if (b.mark_imported_contacts_as_private && b.import_existing_chats) {
      ctx.addIssue({ code: 'custom', path: ['mark_imported_contacts_as_private'], message: 'cannot be combined with import_existing_chats' })
    }
  })
  .meta({ id: 'AlphaConnectBody' })

const pairingCode = {
  pairing_code: z.string().nullable().meta({ description: 'With link_method pairing_code: the 8-character code to type on the phone', example: 'K7QX3M9P' }),
  pairing_code_expires_at: DateTime.nullable(),
}

export const AlphaConnectResult = z
  .object({
    success: SuccessFlag,
    phone_number: z.string(),
    session_id: z.string(),
    status: z
      .enum(PAIRING_STATUSES)
      .meta({ description: '`qr_pending` while linking; `connected` when the number was already linked and force_new was not set' }),
    link_method: z.enum(['qr', 'pairing_code']),
    ...pairingCode,
    connect_url: z
      .string()
      .nullable()
      .meta({ description: 'Hosted page (no login needed) showing a self-refreshing QR code or the pairing code, and a success state' }),
    connect_url_expires_at: z.number().int().nullable().meta({ description: 'Unix epoch milliseconds' }),
    poll_qr_path: z.string().meta({ description: 'Relative to the REST base URL' }),
    poll_status_path: z.string().meta({ description: 'Relative to the REST base URL' }),
    reason: z.string().nullable().meta({ description: 'Why linking cannot go on yet, e.g. relay_unavailable' }),
    message: z.string().nullable(),
  })
  .meta({ id: 'AlphaConnectResult' })

export const AlphaQr = z
  .object({
    success: SuccessFlag,
    phone_number: z.string(),
    status: z.enum(PAIRING_STATUSES),
    qr_code: z.string().nullable().meta({ description: 'The raw QR payload; render it yourself or use qr_data_url' }),
    qr_data_url: z.string().nullable().meta({ description: 'The QR code as a PNG data URL' }),
    expires_at: DateTime.nullable().meta({ description: 'When this QR code lapses; a new one replaces it before that (poll every 10 to 15 s)' }),
    ...pairingCode,
  })
  .meta({ id: 'AlphaQr' })

export const AlphaStatus = z
  .object({
    success: SuccessFlag,
    phone_number: z.string(),
    session_id: z.string().nullable(),
    status: z.enum(PAIRING_STATUSES),
    account_status: z.enum(ACCOUNT_STATUSES).nullable(),
    reason: z.string().nullable().meta({
      description:
        'Why the link is not connected: logged_out, blocked_by_alpha, replaced, passkey_required, passkey_expired, passkey_rejected, passkey_timeout, link_expired, unresponsive, session_unreadable, relay_unavailable; while connecting, passkey_required or passkey_code (the owner’s passkey step, docs/channels/alpha.md)',
    }),
    message: z.string().nullable().meta({ description: 'One human sentence about the reason' }),
    has_qr: z.boolean(),
    qr_expires_at: DateTime.nullable(),
    ...pairingCode,
    last_activity: DateTime.nullable(),
    message_count: z.number().int().nullable(),
    proxy: z.string().nullable(),
    live: z.boolean().meta({ description: 'true when the state was read from the relay running the session just now' }),
  })
  .meta({ id: 'AlphaStatus' })

export const AlphaDisconnected = z
  .object({ success: SuccessFlag, phone_number: z.string(), status: z.enum(['removed', 'disconnected']) })
  .meta({ id: 'AlphaDisconnected' })

/** The number in the path: E.164, URL-encoded; a missing leading + is tolerated. */
export const AlphaPhoneParam = z.object({
  phoneNumber: z
    .string()
    .transform((s) => (/^\d+$/.test(s) ? `+${s}` : s))
    .pipe(E164)
    .meta({ description: 'The alpha number in E.164 format, URL-encoded in paths (+ as %2B)', example: '+15551234567' }),
})
