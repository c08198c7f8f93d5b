/** Tools for the SMS (spec 4.5), page-inbox (4.6) and custom (4.7) channels. */
import { CustomInboundBody, SetCustomWebhookBody } from '../../../schema/api/custom-channel'
import { SelectPageBody, SetSocialAppBody } from '../planned-bodies'
import { ACTS, READS, READS_UPSTREAM, REMOVES, toolInput, type ToolSpec } from '../tool'

const none = toolInput({})

export { smsTools } from '../../channels/sms/tools'

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
      'Returns a short-lived connect_url where the user grants the page permissions; afterwards pick the page with list_pages and select_page. Answers social_app_required until set_social_app was done.',
    input: none,
    method: 'POST',
    path: '/channels/meta/connect',
    hints: ACTS,
  },
  {
    name: 'get_social_inbox_status',
    title: 'Get the page-inbox connection',
    description: 'Reports the page-inbox connection: pending, pages_loaded, connected, failed (with a reason) or expired.',
    input: none,
    method: 'GET',
    path: '/channels/meta/status',
    hints: READS,
  },
  {
    name: 'list_pages',
    title: 'List pages',
    description: 'Lists the pages the user granted access to, so one can be chosen with select_page.',
    input: none,
    method: 'GET',
    path: '/channels/meta/pages',
    hints: READS_UPSTREAM,
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
