/**
 * Tools for messages, accounts and usage (spec 4.1, 4.2): the receive-and-reply loop of an agent, read off their
 * routes (lib/tool-spec.ts `routeTools`), in the order tools/list shows them.
 */
import { ACTS, READS, READS_UPSTREAM, REMOVES, routeTools } from '../../lib/tool-spec'
import { accountActionRoutes } from '../../routes/account-actions'
import { accountsRoutes } from '../../routes/accounts'
import { mediaRoutes } from '../../routes/media'
import { messageActionRoutes } from '../../routes/message-actions'
import { messagesRoutes } from '../../routes/messages'
import { usageRoutes } from '../../routes/usage'
import { mediaToolResult } from '../media-answer'

export const messagingTools = [
  ...routeTools(accountsRoutes, '/accounts', [{ name: 'list_accounts', hints: READS }]),
  ...routeTools(messagesRoutes, '/messages', [
    { name: 'wait_for_messages', hints: READS },
    { name: 'send_message', hints: ACTS },
    { name: 'get_message', hints: READS },
    { name: 'list_messages', hints: READS },
    // Issue 25: a dry run changes nothing anywhere.
    { name: 'check_send', hints: READS },
  ]),
  // Issue 25: what an agent does in a conversation besides sending.
  ...routeTools(messageActionRoutes, '/messages', [
    // Reacting twice with the same emoji leaves one reaction; the person sees each change.
    { name: 'react_to_message', hints: { ...ACTS, idempotentHint: true } },
    { name: 'remove_reaction', hints: REMOVES },
    { name: 'mark_read', hints: { ...ACTS, idempotentHint: true } },
  ]),
  ...routeTools(accountActionRoutes, '/accounts', [
    { name: 'send_typing', hints: { ...ACTS, idempotentHint: true } },
    { name: 'lookup_number', hints: READS_UPSTREAM },
  ]),
  // Images and audio come back as MCP content blocks, not as the REST body's bytes.
  ...routeTools(mediaRoutes, '/media', [
    { name: 'get_media', hints: READS, answer: (res, args) => mediaToolResult(res, typeof args.mediaId === 'string' ? args.mediaId : '') },
  ]),
  ...routeTools(usageRoutes, '/usage', [{ name: 'get_usage', hints: READS }]),
]
