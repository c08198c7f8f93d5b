/** SMS channel shapes (spec 4.5): the two connect bodies, the connect, status and disconnect answers. */
import { z } from 'zod'
import { DateTime, E164, SuccessFlag } from './common'

export const ConnectSmsBody = z
  .object({
    account_sid: z.string().regex(/^AC[0-9a-fA-F]{32}$/, 'must be a Twilio account SID (AC followed by 32 hex digits)'),
    auth_token: z.string().min(1).max(128).meta({ description: 'Checked with Twilio and stored sealed; never returned' }),
    phone_number: E164.meta({ description: 'A number on that Twilio account, with SMS capability' }),
    a2p_registered: z
      .boolean()
      .default(false)
      .meta({ description: 'Required true for a +1 number: the number is in a Messaging Service with a US A2P 10DLC campaign' }),
  })
  .meta({ id: 'ConnectSmsBody' })

export const ConnectAndroidSmsBody = z
  .object({
    username: z.string().min(1).max(128).meta({ description: 'From the app’s Home tab (cloud) or Settings → Local server (local)' }),
    password: z.string().min(1).max(256).meta({ description: 'Stored sealed; never returned' }),
    phone_number: E164.meta({ description: "The phone's own number" }),
    mode: z
      .enum(['cloud', 'local'])
      .default('cloud')
      .meta({ description: 'cloud: through the gateway’s cloud server; local: the phone is reached directly at base_url' }),
    base_url: z
      .string()
      .min(1)
      .max(2048)
      .optional()
      .meta({ description: 'Required with mode local: a public https URL reaching the phone’s local server (for example through a tunnel)' }),
  })
  .meta({ id: 'ConnectAndroidSmsBody' })

export const SmsQuery = z.object({
  phone_number: E164.optional().meta({ description: 'The SMS number; optional when exactly one SMS number is connected' }),
})

export const DisconnectSmsQuery = SmsQuery.extend({
  transport: z
    .enum(['twilio', 'android_gateway', 'all'])
    .default('all')
    .meta({ description: 'Remove one transport only; the number leaves the service when none remains. Default: all' }),
})

const A2p = z
  .object({
    required: z.boolean().meta({ description: 'True for +1 (US/Canada) numbers' }),
    registered: z.boolean().meta({ description: 'What connect_sms was told (a2p_registered)' }),
    state: z.enum(['not_required', 'confirmed', 'unconfirmed']).meta({
      description:
        'confirmed: Twilio lists the number in a Messaging Service with a US A2P campaign whose status is VERIFIED (a toll-free number: its toll-free verification is TWILIO_APPROVED); unconfirmed: sends answer 409 a2p_unconfirmed',
    }),
    registration: z.enum(['a2p_10dlc', 'toll_free_verification']).nullable().meta({
      description:
        'What confirms the number: an A2P 10DLC campaign, or for a toll-free number (800, 833, 844, 855, 866, 877, 888) its toll-free verification; null when not required',
    }),
    messaging_service_sid: z.string().nullable(),
    campaign_status: z.string().nullable().meta({
      description:
        'The campaign status Twilio reported (VERIFIED, PENDING, FAILED, …); for a toll-free number the verification status (TWILIO_APPROVED, PENDING_REVIEW, IN_REVIEW, TWILIO_REJECTED)',
    }),
    checked_at: DateTime.nullable(),
  })
  .meta({ id: 'SmsA2pState' })

export const TwilioTransportState = z
  .object({
    status: z.enum(['connected', 'error']).meta({ description: 'error: the last check with Twilio failed (see error)' }),
    account_sid: z.string().meta({ description: 'Masked: the first and last 4 characters' }),
    number_sid: z.string(),
    capabilities: z.object({ sms: z.boolean(), mms: z.boolean() }),
    inbound_url: z.string().meta({ description: 'The incoming-SMS webhook set on the number' }),
    a2p: A2p,
    error: z.string().nullable(),
    live: z.boolean().meta({ description: 'True when read from Twilio now' }),
  })
  .meta({ id: 'TwilioTransportState' })

export const AndroidTransportState = z
  .object({
    status: z.enum(['connected', 'offline', 'error']).meta({
      description: 'offline: the gateway reports the phone not seen for 30 minutes or more; error: the gateway could not be asked',
    }),
    mode: z.enum(['cloud', 'local']),
    webhook_url: z.string().meta({ description: 'The URL registered on the gateway for every event' }),
    webhooks: z.array(z.object({ id: z.string(), event: z.string() })),
    device_id: z.string().nullable(),
    last_seen: DateTime.nullable().meta({
      description: 'When the phone last reached the gateway (cloud: GET /devices lastSeen; local: the last answer or webhook)',
    }),
    error: z.string().nullable(),
    live: z.boolean(),
  })
  .meta({ id: 'AndroidTransportState' })

export const SmsStatus = z
  .object({
    success: SuccessFlag,
    phone_number: E164.nullable(),
    account_id: z.string().nullable(),
    status: z.enum(['connected', 'connecting', 'disconnected', 'restricted', 'not_connected']),
    sends_via: z.enum(['twilio', 'android_gateway']).nullable().meta({ description: 'The phone sends when both transports exist' }),
    twilio: TwilioTransportState.nullable(),
    android_gateway: AndroidTransportState.nullable(),
    connected_at: DateTime.nullable(),
    last_inbound_at: DateTime.nullable(),
    last_outbound_at: DateTime.nullable(),
  })
  .meta({ id: 'SmsStatus' })

export const AndroidSmsStatus = z
  .object({
    success: SuccessFlag,
    phone_number: E164.nullable(),
    status: z.enum(['connected', 'offline', 'error', 'not_connected']),
    android_gateway: AndroidTransportState.nullable(),
  })
  .meta({ id: 'AndroidSmsStatus' })

export const SmsRemoved = z
  .object({
    success: SuccessFlag,
    phone_number: E164.nullable(),
    status: z.enum(['removed', 'transport_removed', 'not_connected']).meta({
      description: 'removed: the number left the service; transport_removed: another transport remains',
    }),
    removed: z.array(z.enum(['twilio', 'android_gateway'])),
    remaining: z.array(z.enum(['twilio', 'android_gateway'])),
    upstream_cleared: z.boolean().meta({ description: 'False when the provider could not be reached to clear the webhooks (removal went ahead anyway)' }),
  })
  .meta({ id: 'SmsRemoved' })

export const AndroidSmsConnected = SmsStatus.extend({
  webhook_url: z.string().meta({ description: 'The URL registered on the gateway for sms:received, sms:sent, sms:delivered, sms:failed and mms:downloaded' }),
}).meta({ id: 'AndroidSmsConnected' })
