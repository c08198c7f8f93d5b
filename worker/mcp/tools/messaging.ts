/**
 * Tools for messages, accounts and usage (spec 4.1, 4.2): the receive-and-reply loop of an agent, read off their
 * routes (lib/tool-spec.ts `routeTools`), in the order tools/list shows them.
 */
import { ACTS, READS, routeTools } from '../../lib/tool-spec'
import { accountsRoutes } from '../../routes/accounts'
import { mediaRoutes } from '../../routes/media'
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
  ]),
  // Images and audio come back as MCP content blocks, not as the REST body's bytes.
  ...routeTools(mediaRoutes, '/media', [
    { name: 'get_media', hints: READS, answer: (res, args) => mediaToolResult(res, typeof args.mediaId === 'string' ? args.mediaId : '') },
  ]),
  ...routeTools(usageRoutes, '/usage', [{ name: 'get_usage', hints: READS }]),
]
