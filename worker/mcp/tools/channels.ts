/** Tools for the SMS (spec 4.5), page-inbox (4.6) and custom (4.7) channels. */
import { CustomInboundBody, SetCustomWebhookBody } from '../../../schema/api/custom-channel'
import { SelectPageBody, SetSocialAppBody, SocialConnectBody } from '../../../schema/api/social'
import { ConnectAndroidSmsBody, ConnectSmsBody } from '../planned-bodies'
import { ACTS, READS, READS_UPSTREAM, REMOVES, toolInput, type ToolSpec } from '../tool'

const none = toolInput({})

export const smsTools: ToolSpec[] = [
  {
    name: 'connect_sms',
    title: 'Connect an SMS number',
    description:
      "Connects the user's own SMS number at their telephony provider (account SID and auth token) and points the number's incoming-SMS webhook at the service. A +1 (US/Canada) number needs a2p_registered true, after carrier registration.",
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
      "Connects an Android phone running the SMS gateway app (cloud or local mode) so SMS go out from the user's own SIM; registers the webhooks for incoming SMS and delivery reports. When both SMS connections exist, sends use the phone.",
    input: toolInput({ body: ConnectAndroidSmsBody }),
    method: 'POST',
    path: '/channels/sms/android-gateway',
    hints: { ...ACTS, idempotentHint: true },
  },
  {
    name: 'get_sms_status',
    title: 'Get the SMS connection',
    description: 'Reports the SMS connection at the telephony provider: the number and its state.',
    input: none,
    method: 'GET',
    path: '/channels/sms',
    hints: READS_UPSTREAM,
  },
  {
    name: 'get_android_sms_status',
    title: 'Get the Android SMS gateway connection',
    description: 'Reports the Android SMS gateway connection, including when the phone was last seen.',
    input: none,
    method: 'GET',
    path: '/channels/sms/android-gateway',
    hints: READS_UPSTREAM,
  },
  {
    name: 'disconnect_sms',
    title: 'Disconnect SMS',
    description:
      'Clears the webhooks the service set up and removes the SMS number from the service (it stays with the provider); ask the user first. Idempotent.',
    input: none,
    method: 'DELETE',
    path: '/channels/sms',
    hints: REMOVES,
  },
]

export const pageInboxTools: ToolSpec[] = [
  {
    name: 'set_social_app',
    title: 'Save the social app',
    description:
      "Saves the user's own registered social app (app ID, app secret, configuration ID), needed once before connect_social_inbox; the answer gives the redirect URI and callback URL to paste into that app.",
    input: toolInput({ body: SetSocialAppBody }),
    method: 'PUT',
    path: '/channels/meta/app',
    hints: { ...REMOVES, openWorldHint: false },
  },
  {
    name: 'connect_social_inbox',
    title: 'Connect a page inbox',
    description:
      'Returns a short-lived connect_url to give the user: they grant the page permissions there; then list_pages and select_page. Answers social_app_required until set_social_app was done.',
    input: toolInput({ body: SocialConnectBody, bodyOptional: true }),
    method: 'POST',
    path: '/channels/meta/connect',
    hints: ACTS,
  },
  {
    name: 'get_social_inbox_status',
    title: 'Get the page-inbox connection',
    description:
      'Reports the page-inbox connection: not_connected, pending, pages_loaded, connected, failed (with a reason, such as token_revoked) or expired, with the page and its linked professional account.',
    input: none,
    method: 'GET',
    path: '/channels/meta/status',
    hints: READS,
  },
  {
    name: 'list_pages',
    title: 'List pages',
    description: 'Lists the pages the user granted access to (state pages_loaded), each with its linked professional account, so one can be chosen with select_page.',
    input: none,
    method: 'GET',
    path: '/channels/meta/pages',
    hints: READS,
  },
  {
    name: 'select_page',
    title: 'Select the page',
    description:
      'Connects one page (and the professional account linked to it) as the inbox; one page per account. On this channel you can only reply to people who wrote, within 24 hours of their last message.',
    input: toolInput({ body: SelectPageBody }),
    method: 'POST',
    path: '/channels/meta/pages/select',
    hints: { ...ACTS, idempotentHint: true },
  },
  {
    name: 'disconnect_social_inbox',
    title: 'Disconnect the page inbox',
    description: 'Removes the page connection and its linked professional account; ask the user first. Idempotent.',
    input: none,
    method: 'DELETE',
    path: '/channels/meta',
    hints: REMOVES,
  },
]

export const customChannelTools: ToolSpec[] = [
  {
    name: 'set_custom_channel_webhook',
    title: 'Set the custom channel webhook',
    description:
      "Connects or updates the custom channel: outbound messages are POSTed as JSON to this public https URL (unsigned, so put a secret in the URL). The custom account counts against the plan's account cap.",
    input: toolInput({ body: SetCustomWebhookBody }),
    method: 'PUT',
    path: '/channels/custom',
    // Replaces the previous URL; setting the same URL again changes nothing.
    hints: { ...REMOVES, openWorldHint: false },
  },
  {
    name: 'push_custom_channel_message',
    title: 'Push an inbound custom-channel message',
    description:
      "Stores a message as if a person wrote it on the user's bridge (customData.body and fromId are required); it reaches wait_for_messages like any inbound message. Meant for bridges and tests; a repeated messageSid is stored once.",
    input: toolInput({ body: CustomInboundBody }),
    method: 'POST',
    path: '/channels/custom/inbound',
    hints: { ...ACTS, openWorldHint: false },
  },
  {
    name: 'get_custom_channel_status',
    title: 'Get the custom channel',
    description: 'Reports whether the custom channel is connected, its webhook URL with the secret part masked, and the URL a bridge pushes inbound messages to.',
    input: none,
    method: 'GET',
    path: '/channels/custom',
    hints: READS,
  },
  {
    name: 'disconnect_custom_channel',
    title: 'Disconnect the custom channel',
    description: 'Removes the custom channel: replies stop and queued messages fail, history stays; ask the user first. Idempotent.',
    input: none,
    method: 'DELETE',
    path: '/channels/custom',
    hints: { ...REMOVES, openWorldHint: false },
  },
]
