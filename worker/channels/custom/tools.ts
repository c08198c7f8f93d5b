/** The custom channel's MCP tools (spec 4.7), each one of its REST operations in routes.ts. */
import { CustomInboundBody, SetCustomWebhookBody } from '../../../schema/api/custom-channel'
import { ACTS, READS, REMOVES, toolInput, type ToolSpec } from '../../lib/tool-spec'

const none = toolInput({})

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
    description:
      'Reports whether the custom channel is connected, its webhook URL with the secret part masked, and the URL a bridge pushes inbound messages to.',
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
