/** The page inbox's MCP tools (spec 4.6), each one of its REST operations in routes.ts, with the routes' own schemas. */
import { SelectPageBody, SetSocialAppBody, SocialConnectBody } from '../../../schema/api/social'
import { ACTS, READS, REMOVES, toolInput, type ToolSpec } from '../../lib/tool-spec'

const none = toolInput({})

export const socialTools: ToolSpec[] = [
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
    description:
      'Lists the pages the user granted access to (state pages_loaded), each with its linked professional account, so one can be chosen with select_page.',
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
