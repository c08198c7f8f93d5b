/** The SMS channel's MCP tools (spec 4.5), each one of its REST operations in routes.ts. */
import { ConnectAndroidSmsBody, ConnectSmsBody, DisconnectSmsQuery, SmsQuery } from '../../../schema/api/sms'
import { ACTS, READS_UPSTREAM, REMOVES, toolInput, type ToolSpec } from '../../lib/tool-spec'

export const smsTools: ToolSpec[] = [
  {
    name: 'connect_sms',
    title: 'Connect an SMS number',
    description:
      "Connects the user's own Twilio number (account SID and auth token) and points the number's incoming-SMS webhook at the service. A +1 (US/Canada) number needs a2p_registered true, after carrier registration.",
    input: toolInput({ body: ConnectSmsBody }),
    method: 'POST',
    path: '/channels/sms/twilio',
    // Replaces whatever incoming-SMS webhook the number had at the provider.
    hints: { ...ACTS, destructiveHint: true, idempotentHint: true },
  },
  {
    name: 'connect_android_sms',
    title: 'Connect an Android SMS gateway',
    description:
      "Connects an Android phone running the SMS Gateway app (cloud or local mode) so SMS go out from the user's own SIM; registers the webhooks for incoming SMS and delivery reports. When both SMS connections exist, sends use the phone (text only, no media).",
    input: toolInput({ body: ConnectAndroidSmsBody }),
    method: 'POST',
    path: '/channels/sms/android-gateway',
    hints: { ...ACTS, idempotentHint: true },
  },
  {
    name: 'get_sms_status',
    title: 'Get the SMS connection',
    description:
      'Reports the SMS number: which transport sends, the Twilio number (capabilities, A2P state, asked again on every call) and the phone (last seen), last inbound and outbound times. phone_number is needed only when several SMS numbers are connected.',
    input: toolInput({ query: SmsQuery }),
    method: 'GET',
    path: '/channels/sms',
    hints: READS_UPSTREAM,
  },
  {
    name: 'get_android_sms_status',
    title: 'Get the Android SMS gateway connection',
    description: 'Reports the Android phone transport, including when the phone was last seen (offline after 30 minutes unseen).',
    input: toolInput({ query: SmsQuery }),
    method: 'GET',
    path: '/channels/sms/android-gateway',
    hints: READS_UPSTREAM,
  },
  {
    name: 'disconnect_sms',
    title: 'Disconnect SMS',
    description:
      'Clears the webhooks the service set up and removes the SMS transport(s) (transport: twilio, android_gateway, or all by default); the number leaves the service with its last transport and stays with the provider. Ask the user first; idempotent.',
    input: toolInput({ query: DisconnectSmsQuery }),
    method: 'DELETE',
    path: '/channels/sms',
    hints: REMOVES,
  },
]
